package io.pier.security.acl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * The ACL authorizer: super users, then the ACLs of an immutable {@link AclSnapshot}, then
 * {@code allow.everyone.if.no.acl.found}. Reads take the current snapshot from a volatile field,
 * without locks; changes (rare, admin requests) are serialised, written to the store, then
 * published as a new snapshot.
 *
 * <p>On a gateway the ACLs are every node's, kept on the upstream ({@link #remote}): a change is
 * written there first and seen here once read back ({@link #apply}), as on every other node.
 */
public final class AclAuthorizer implements Authorizer {
    /** Kafka's only cluster resource name. */
    public static final String CLUSTER_NAME = "kafka-cluster";

    /** Where a gateway's changes go before they are seen: they come back through {@link #apply}. */
    public interface Remote {
        /** Adds and removes the bindings and returns once this node has applied every change. */
        void write(List<AclBinding> added, List<AclBinding> removed) throws IOException;
    }

    private final AuthorizerConfig config;
    /** A broker's file; null on a gateway. */
    private final AclStore store;
    /** A gateway's upstream, once attached. */
    private volatile Remote remote;
    private volatile AclSnapshot snapshot;

    private AclAuthorizer(AuthorizerConfig config, AclStore store, AclSnapshot snapshot) {
        this.config = config;
        this.store = store;
        this.snapshot = snapshot;
    }

    /** Loads the stored ACLs. */
    public static AclAuthorizer open(AuthorizerConfig config, AclStore store) throws IOException {
        return new AclAuthorizer(config, store, new AclSnapshot(store.load()));
    }

    /**
     * A gateway's authorizer, without ACLs until the upstream's are read into it ({@link #apply});
     * changes fail until {@link #attach} names where they go.
     */
    public static AclAuthorizer remote(AuthorizerConfig config) {
        return new AclAuthorizer(config, null, AclSnapshot.EMPTY);
    }

    /** Where a {@link #remote} authorizer's changes go from now on. */
    public void attach(Remote to) {
        if (store != null) {
            throw new IllegalStateException("a broker's ACLs are kept in its data folder");
        }
        this.remote = to;
    }

    /** A gateway: a binding read back from the upstream, added ({@code present}) or removed, seen from now on. */
    public synchronized void apply(AclBinding binding, boolean present) {
        Set<AclBinding> next = new LinkedHashSet<>(snapshot.bindings());
        if (present ? next.add(binding) : next.remove(binding)) {
            snapshot = new AclSnapshot(next);
        }
    }

    @Override
    public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type,
            String name) {
        if (config.superUsers().contains(principal.toString())) {
            return true;
        }
        return switch (snapshot.decide(principal, host, operation, type, name)) {
            case ALLOW -> true;
            case DENY -> false;
            case NO_ACLS -> config.allowEveryoneIfNoAclFound();
        };
    }

    /**
     * Kafka's authorizeByResourceType (see {@link AclSnapshot#allowsSomeResource}), for a super
     * user always; with {@code allow.everyone.if.no.acl.found}, also when the type has no ACLs.
     */
    @Override
    public boolean authorizeAny(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type) {
        if (config.superUsers().contains(principal.toString())) {
            return true;
        }
        return snapshot.allowsSomeResource(principal, host, operation, type)
                || (config.allowEveryoneIfNoAclFound() && !snapshot.hasAny(type));
    }

    /** How many bindings this node enforces now, for the {@code pier_acl_bindings} gauge. */
    public int count() {
        return snapshot.bindings().size();
    }

    public List<AclBinding> describe(AclBindingFilter filter) {
        List<AclBinding> out = new ArrayList<>();
        for (AclBinding b : snapshot.bindings()) {
            if (filter.matches(b)) {
                out.add(b);
            }
        }
        return out;
    }

    /**
     * Adds the valid bindings; per binding, null or why it was refused. One writer at a time (the
     * metadata agent): the new set is stored before it replaces the snapshot readers see.
     */
    public List<ApiException> create(List<AclBinding> bindings) {
        List<ApiException> results = new ArrayList<>(bindings.size());
        Set<AclBinding> next = new LinkedHashSet<>(snapshot.bindings());
        for (AclBinding b : bindings) {
            ApiException invalid = validate(b);
            results.add(invalid);
            if (invalid == null) {
                next.add(b);
            }
        }
        publish(new ArrayList<>(next));
        return results;
    }

    /** Removes every binding each filter matches; per filter, the bindings it removed. One writer at a time. */
    public List<List<AclBinding>> delete(List<AclBindingFilter> filters) {
        List<List<AclBinding>> removed = new ArrayList<>(filters.size());
        List<AclBinding> next = new ArrayList<>(snapshot.bindings());
        for (AclBindingFilter f : filters) {
            List<AclBinding> matched = new ArrayList<>();
            for (AclBinding b : next) {
                if (f.matches(b)) {
                    matched.add(b);
                }
            }
            next.removeAll(matched);
            removed.add(matched);
        }
        publish(next);
        return removed;
    }

    private void publish(List<AclBinding> next) {
        List<AclBinding> before = snapshot.bindings();
        if (next.size() == before.size() && before.containsAll(next)) {
            return;
        }
        try {
            if (store == null) {
                Remote to = remote;
                if (to == null) {
                    throw new IOException("the upstream's ACLs are not read yet");
                }
                Set<AclBinding> was = new HashSet<>(before);
                Set<AclBinding> now = new HashSet<>(next);
                to.write(next.stream().filter(b -> !was.contains(b)).toList(),
                        before.stream().filter(b -> !now.contains(b)).toList());
                return; // seen here once read back, through apply
            }
            store.save(next);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the ACLs", e);
        }
        snapshot = new AclSnapshot(next);
    }

    /** What Kafka refuses to store: wildcards of the filter kind, unknown values, an odd cluster name. */
    static ApiException validate(AclBinding b) {
        if (b.isUnknown()) {
            return new InvalidRequestException("ACL binding has an unknown element: " + b);
        }
        PatternType pattern = b.pattern().patternType();
        if (pattern != PatternType.LITERAL && pattern != PatternType.PREFIXED) {
            return new InvalidRequestException("Pattern type must be LITERAL or PREFIXED: " + pattern);
        }
        ResourceType type = b.pattern().resourceType();
        if (type == ResourceType.ANY) {
            return new InvalidRequestException("Resource type ANY is only for filters");
        }
        if (type == ResourceType.CLUSTER && !CLUSTER_NAME.equals(b.pattern().name())) {
            return new InvalidRequestException("The only valid name for the CLUSTER resource is " + CLUSTER_NAME);
        }
        if (b.pattern().name().isEmpty()) {
            return new InvalidRequestException("Resource name must not be empty");
        }
        if (b.entry().operation() == AclOperation.ANY || b.entry().permissionType() == AclPermissionType.ANY) {
            return new InvalidRequestException("Operation and permission ANY are only for filters");
        }
        try {
            Principals.parse(b.entry().principal());
        } catch (IllegalArgumentException e) {
            return new InvalidRequestException("Invalid principal " + b.entry().principal());
        }
        return null;
    }
}
