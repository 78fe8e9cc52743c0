package io.pier.console;

import io.pier.security.acl.AclAuthorizer;
import io.pier.security.acl.Authorizer;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * What one page view may show: the broker's authorizer (the one Kafka requests go through) asked
 * whether the console's principal, from the viewer's host, may DESCRIBE a topic, a group or the
 * cluster. With authorization off, everything. The authorizer answers without locks.
 */
interface Viewer {
    Viewer EVERYTHING = new Viewer() {
        @Override
        public boolean topic(String name) {
            return true;
        }

        @Override
        public boolean group(String name) {
            return true;
        }

        @Override
        public boolean cluster() {
            return true;
        }
    };

    boolean topic(String name);

    boolean group(String name);

    /** The broker-wide figures (request rates, listeners). */
    boolean cluster();

    /** {@link #topic} remembered per name, for a page that checks the same topics many times. */
    default java.util.function.Predicate<String> topics() {
        java.util.Map<String, Boolean> seen = new java.util.HashMap<>();
        return name -> seen.computeIfAbsent(name, this::topic);
    }

    /** The viewer of {@code principal} from {@code host}; {@code authorizer} null when authorization is off. */
    static Viewer of(Authorizer authorizer, KafkaPrincipal principal, String host) {
        if (authorizer == null || authorizer == Authorizer.ALLOW_ALL) {
            return EVERYTHING;
        }
        return new Viewer() {
            @Override
            public boolean topic(String name) {
                return authorizer.authorize(principal, host, AclOperation.DESCRIBE, ResourceType.TOPIC, name);
            }

            @Override
            public boolean group(String name) {
                return authorizer.authorize(principal, host, AclOperation.DESCRIBE, ResourceType.GROUP, name);
            }

            @Override
            public boolean cluster() {
                return authorizer.authorize(principal, host, AclOperation.DESCRIBE, ResourceType.CLUSTER,
                        AclAuthorizer.CLUSTER_NAME);
            }
        };
    }
}
