package io.pier.security.acl;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * Decides whether a principal may perform an operation on a resource. Called on request threads
 * for every checked request, so implementations answer without locks.
 */
public interface Authorizer {
    /** Authorization off ({@code authorizer.class.name} unset): everything is allowed, as before ACLs. */
    Authorizer ALLOW_ALL = (principal, host, operation, type, name) -> true;

    boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type, String name);

    /** Whether {@code operation} is allowed on at least one resource of {@code type} (Kafka's authorizeByResourceType). */
    default boolean authorizeAny(KafkaPrincipal principal, String host, AclOperation operation, ResourceType type) {
        return true;
    }
}
