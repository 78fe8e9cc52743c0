package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterMetadataStoreTest {
    @TempDir
    Path dir;

    @Test
    void shouldStartEmptyWithFreshClusterId() throws Exception {
        ClusterMetadataStore.Image image = new ClusterMetadataStore(dir).load();
        assertThat(image.topics()).isEmpty();
        assertThat(image.clusterId()).isNotBlank();
    }

    @Test
    void shouldRoundTripTopicsAndConfigs() throws Exception {
        ClusterMetadataStore store = new ClusterMetadataStore(dir);
        Uuid id = Uuid.randomUuid();
        TopicMetadata t1 = new TopicMetadata("orders", id, 3, Map.of("retention.ms", "1000", "odd=key", "a b"));
        TopicMetadata t2 = new TopicMetadata("x.y_z-1", Uuid.randomUuid(), 1, Map.of());
        store.save(new ClusterMetadataStore.Image("cid", List.of(t1, t2), Map.of("log.retention.ms", "5"),
                Map.of("g.1", Map.of("share.auto.offset.reset", "earliest"), "g2", Map.of()), quotas()));

        ClusterMetadataStore.Image back = new ClusterMetadataStore(dir).load();
        assertThat(back.clusterId()).isEqualTo("cid");
        assertThat(back.topics()).containsExactlyInAnyOrder(t1, t2);
        assertThat(back.brokerConfigs()).containsExactly(Map.entry("log.retention.ms", "5"));
        assertThat(back.groupConfigs()).containsOnlyKeys("g.1", "g2");
        assertThat(back.groupConfigs().get("g.1")).containsExactly(Map.entry("share.auto.offset.reset", "earliest"));
        assertThat(back.clientQuotas()).isEqualTo(quotas());
        assertThat(Files.list(dir.resolve("meta"))).noneMatch(p -> p.toString().endsWith(".tmp"));
    }

    /** A named user, a default client id, the pair of both, a dotted IP: every shape of entity. */
    private static Map<ClientQuotaEntity, Map<String, Double>> quotas() {
        Map<String, String> defaultClient = new HashMap<>();
        defaultClient.put(ClientQuotaEntity.CLIENT_ID, null);
        Map<String, String> userAndDefaultClient = new HashMap<>(defaultClient);
        userAndDefaultClient.put(ClientQuotaEntity.USER, "al.ice=x");
        return Map.of(
                new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice")),
                Map.of("producer_byte_rate", 1048576.0, "request_percentage", 12.5),
                new ClientQuotaEntity(defaultClient), Map.of("consumer_byte_rate", 2e6),
                new ClientQuotaEntity(userAndDefaultClient), Map.of("producer_byte_rate", 3.0),
                new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "10.0.0.1")), Map.of("connection_creation_rate", 5.0));
    }
}
