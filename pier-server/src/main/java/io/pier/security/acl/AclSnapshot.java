package io.pier.security.acl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * An immutable set of ACLs, indexed for matching: literal patterns by resource name (the {@code *}
 * wildcard is a literal name too), prefixed patterns in a list per resource type. Matching is a
 * pure function of the snapshot and the request, which is what the authorizer swaps on change.
 */
public final class AclSnapshot {
    public static final AclSnapshot EMPTY = new AclSnapshot(List.of());

    private static final String WILDCARD = ResourcePattern.WILDCARD_RESOURCE;
    private static final String ANY_PRINCIPAL = "User:*";
    private static final String ANY_HOST = "*";

    private final List<AclBinding> all;
    private final Map<ResourceType, Map<String, List<AccessControlEntry>>> literal = new EnumMap<>(ResourceType.class);
    private final Map<ResourceType, List<AclBinding>> prefixed = new EnumMap<>(ResourceType.class);

    public AclSnapshot(Collection<AclBinding> bindings) {
        this.all = List.copyOf(Set.copyOf(bindings));
        for (AclBinding b : all) {
            ResourcePattern p = b.pattern();
            if (p.patternType() == PatternType.PREFIXED) {
                prefixed.computeIfAbsent(p.resourceType(), t -> new ArrayList<>()).add(b);
            } else {
                literal.computeIfAbsent(p.resourceType(), t -> new HashMap<>())
                        .computeIfAbsent(p.name(), n -> new ArrayList<>()).add(b.entry());
            }
        }
    }

    public List<AclBinding> bindings() {
        return all;
    }

    /** The entries whose pattern covers the resource: literal name, literal wildcard, and matching prefixes. */
    List<AccessControlEntry> entriesFor(ResourceType type, String name) {
        List<AccessControlEntry> out = new ArrayList<>();
        Map<String, List<AccessControlEntry>> byName = literal.getOrDefault(type, Map.of());
        out.addAll(byName.getOrDefault(name, List.of()));
        if (!WILDCARD.equals(name)) {
            out.addAll(byName.getOrDefault(WILDCARD, List.of()));
        }
        for (AclBinding b : prefixed.getOrDefault(type, List.of())) {
            if (name.startsWith(b.pattern().name())) {
                out.add(b.entry());
            }
        }
        return out;
    }

    /**
     * The decision from the ACLs alone: DENY wins over ALLOW; no matching entry for the resource at
     * all is {@link Decision#NO_ACLS}, which the authorizer turns into allow or deny by its setting.
     */
    Decision decide(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type, String name) {
        List<AccessControlEntry> entries = entriesFor(type, name);
        if (entries.isEmpty()) {
            return Decision.NO_ACLS;
        }
        String who = principal.toString();
        boolean allowed = false;
        for (AccessControlEntry e : entries) {
            if (!matchesPrincipal(e.principal(), who) || !matchesHost(e.host(), host)) {
                continue;
            }
            if (e.permissionType() == AclPermissionType.DENY && deniedBy(e.operation(), operation)) {
                return Decision.DENY;
            }
            if (e.permissionType() == AclPermissionType.ALLOW && allowedBy(e.operation(), operation)) {
                allowed = true;
            }
        }
        return allowed ? Decision.ALLOW : Decision.DENY;
    }

    enum Decision { ALLOW, DENY, NO_ACLS }

    /**
     * Kafka's authorizeByResourceType: whether some resource of the type allows the operation to
     * the principal. Entries count for their own operation or ALL, nothing implied. A DENY on the
     * literal {@code *} refuses outright; an ALLOW on {@code *} grants; otherwise some other ALLOW
     * must stand undominated: a literal one by no DENY on the same name or on a prefix of it, a
     * prefixed one by no DENY on a prefix of its prefix.
     */
    boolean allowsSomeResource(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type) {
        String who = principal.toString();
        Set<String> deniedLiterals = new HashSet<>();
        Set<String> deniedPrefixes = new HashSet<>();
        List<ResourcePattern> allowed = new ArrayList<>();
        boolean wildcardAllowed = false;
        for (AclBinding b : all) {
            AccessControlEntry e = b.entry();
            if (b.pattern().resourceType() != type || !matchesPrincipal(e.principal(), who)
                    || !matchesHost(e.host(), host) || !deniedBy(e.operation(), operation)) {
                continue; // deniedBy is the rule here for ALLOW entries too: own operation or ALL
            }
            boolean literalPattern = b.pattern().patternType() == PatternType.LITERAL;
            if (e.permissionType() == AclPermissionType.DENY) {
                if (literalPattern && b.pattern().name().equals(WILDCARD)) {
                    return false;
                }
                (literalPattern ? deniedLiterals : deniedPrefixes).add(b.pattern().name());
            } else if (e.permissionType() == AclPermissionType.ALLOW) {
                if (literalPattern && b.pattern().name().equals(WILDCARD)) {
                    wildcardAllowed = true;
                } else {
                    allowed.add(b.pattern());
                }
            }
        }
        if (wildcardAllowed) {
            return true;
        }
        for (ResourcePattern p : allowed) {
            boolean dominated = p.patternType() == PatternType.LITERAL && deniedLiterals.contains(p.name());
            for (int i = 1; i <= p.name().length() && !dominated; i++) {
                dominated = deniedPrefixes.contains(p.name().substring(0, i));
            }
            if (!dominated) {
                return true;
            }
        }
        return false;
    }

    boolean hasAny(ResourceType type) {
        return literal.containsKey(type) || prefixed.containsKey(type);
    }

    private static boolean matchesPrincipal(String aclPrincipal, String who) {
        return aclPrincipal.equals(who) || aclPrincipal.equals(ANY_PRINCIPAL);
    }

    private static boolean matchesHost(String aclHost, String host) {
        return aclHost.equals(ANY_HOST) || aclHost.equals(host);
    }

    /** A DENY entry denies its own operation, or every one if it is ALL; it implies nothing else. */
    static boolean deniedBy(AclOperation entry, AclOperation requested) {
        return entry == AclOperation.ALL || entry == requested;
    }

    /**
     * An ALLOW entry grants its own operation, every one if ALL, and the read-only companion Kafka
     * implies: DESCRIBE from READ, WRITE, DELETE and ALTER; DESCRIBE_CONFIGS from ALTER_CONFIGS.
     */
    static boolean allowedBy(AclOperation entry, AclOperation requested) {
        if (entry == AclOperation.ALL || entry == requested) {
            return true;
        }
        return switch (requested) {
            case DESCRIBE -> entry == AclOperation.READ || entry == AclOperation.WRITE
                    || entry == AclOperation.DELETE || entry == AclOperation.ALTER;
            case DESCRIBE_CONFIGS -> entry == AclOperation.ALTER_CONFIGS;
            default -> false;
        };
    }
}
