package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pier.testkit.PierExtension;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Group configs (resource type GROUP) through the stock Admin client. */
@Timeout(60)
class ShareGroupConfigsIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
        "share.record.lock.duration.ms, 14999",
        "share.delivery.count.limit, 1",
        "share.delivery.count.limit, 100",
        "share.auto.offset.reset, bogus",
        "share.isolation.level, snapshot",
        "share.foo, 1",
    })
    void shouldRefuseInvalidGroupConfigNamingTheSetting(String name, String value) throws Exception {
        String group = "g-invalid";
        Throwable thrown;
        try (Admin admin = clients.admin()) {
            thrown = catchThrowable(() -> alter(admin, group, name, value));
            // Nothing was stored: the group still shows the default (or no such config at all).
            Config config = describe(admin, group);
            ConfigEntry entry = config.get(name);
            if (entry != null) {
                assertThat(entry.value()).isNotEqualTo(value);
                assertThat(entry.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            }
        }
        assertThat(thrown).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining(name);
    }

    @Test
    void shouldDescribeEveryShareConfigWithDefaultsAndOverrides() throws Exception {
        String group = "g-describe";
        try (Admin admin = clients.admin()) {
            alter(admin, group, "share.delivery.count.limit", "3");
            alter(admin, group, "share.auto.offset.reset", "earliest");
            alter(admin, group, "share.isolation.level", "read_committed");
            Config config = describe(admin, group);
            Map<String, String> values = new TreeMap<>();
            config.entries().forEach(e -> values.put(e.name(), e.value()));
            // A group resource has every group type's configs, as in Kafka (consumer.* for KIP-848 groups).
            assertThat(values).containsOnlyKeys(
                    "consumer.heartbeat.interval.ms",
                    "consumer.session.timeout.ms",
                    "errors.deadletterqueue.copy.record.enable",
                    "errors.deadletterqueue.topic.name",
                    "pier.share.ordering",
                    "pier.share.release.backoff.initial.ms",
                    "pier.share.release.backoff.lock.expiry.enable",
                    "pier.share.release.backoff.max.ms",
                    "pier.share.release.backoff.multiplier",
                    "share.auto.offset.reset",
                    "share.delivery.count.limit",
                    "share.heartbeat.interval.ms",
                    "share.isolation.level",
                    "share.partition.max.record.locks",
                    "share.record.lock.duration.ms",
                    "share.renew.acknowledge.enable",
                    "share.session.timeout.ms");
            assertThat(values).containsEntry("share.delivery.count.limit", "3")
                    .containsEntry("share.auto.offset.reset", "earliest")
                    .containsEntry("share.record.lock.duration.ms", "30000")
                    .containsEntry("share.session.timeout.ms", "45000")
                    .containsEntry("share.heartbeat.interval.ms", "5000")
                    .containsEntry("share.isolation.level", "read_committed")
                    .containsEntry("share.partition.max.record.locks", "2000")
                    .containsEntry("share.renew.acknowledge.enable", "true");
            assertThat(config.get("share.delivery.count.limit").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(config.get("share.isolation.level").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(config.get("share.record.lock.duration.ms").source())
                    .isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            // Deleting the override goes back to the broker default.
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.delivery.count.limit", ""),
                            AlterConfigOp.OpType.DELETE)))).all().get();
            ConfigEntry limit = describe(admin, group).get("share.delivery.count.limit");
            assertThat(limit.value()).isEqualTo("5");
            assertThat(limit.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    private static void alter(Admin admin, String group, String name, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                List.of(new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET)))).all().get();
    }

    private static Config describe(Admin admin, String group) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        return admin.describeConfigs(List.of(resource)).all().get().get(resource);
    }
}
