package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

class UpstreamAclsTest {
    @Test
    void shouldKeepEveryFieldOfABindingInItsKey() {
        // Group ids and principals may hold spaces and any other character.
        AclBinding b = new AclBinding(new ResourcePattern(ResourceType.GROUP, "team a/ü", PatternType.PREFIXED),
                new AccessControlEntry("User:CN=alice smith,O=Pier", "10.0.0.1", AclOperation.DESCRIBE_CONFIGS,
                        AclPermissionType.DENY));
        String key = UpstreamAcls.key(b);
        assertThat(UpstreamAcls.binding(key)).isEqualTo(b);
        assertThat(key.split(" ")).hasSize(7);
    }

    @Test
    void shouldRefuseAKeyThatIsNotABinding() {
        assertThatThrownBy(() -> UpstreamAcls.binding("dG9waWM= eA==")).isInstanceOf(IllegalArgumentException.class);
    }
}
