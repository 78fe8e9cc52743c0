package io.pier.it.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import io.pier.testkit.UpstreamKafka;

/** {@link UpstreamKafka} runs a real Kafka broker: stock clients work on it, and its share groups are off. */
@Timeout(120)
class UpstreamKafkaIT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static Map<String, Object> config(Object... keyValues) {
        Map<String, Object> config = UPSTREAM.clientConfig();
        for (int i = 0; i < keyValues.length; i += 2) {
            config.put((String) keyValues[i], keyValues[i + 1]);
        }
        return config;
    }

    @Test
    void shouldReadBackProducedRecordsInAConsumerGroup() throws Exception {
        // Given 100 records produced to a topic of the upstream
        try (Admin admin = Admin.create(config())) {
            admin.createTopics(List.of(new NewTopic("plain", 1, (short) 1))).all().get();
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config("acks", "all",
                "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName()))) {
            for (int i = 0; i < 100; i++) {
                var unused = producer.send(new ProducerRecord<>("plain", "k" + i, "v" + i));
            }
            producer.flush();
        }

        // When a consumer group member subscribes and polls
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config("group.id", "plain-group",
                "auto.offset.reset", "earliest", "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName()))) {
            consumer.subscribe(Set.of("plain"));
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < 100 && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
        }

        // Then it gets every record, in order, at offsets 0..99
        assertThat(got).hasSize(100);
        for (int i = 0; i < 100; i++) {
            assertThat(got.get(i).offset()).isEqualTo(i);
            assertThat(got.get(i).key()).isEqualTo("k" + i);
            assertThat(got.get(i).value()).isEqualTo("v" + i);
        }
    }

    @Test
    void shouldRefuseShareGroupsByDefault() throws Exception {
        // The feature is finalized at nothing: the storage was formatted with share.version=0
        try (Admin admin = Admin.create(config())) {
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            assertThat(features.finalizedFeatures()).doesNotContainKey("share.version");
            assertThat(features.supportedFeatures().get("share.version").maxVersion()).isEqualTo((short) 2);
            assertThatThrownBy(() -> admin.describeShareGroups(List.of("share-off")).all().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(UnsupportedVersionException.class);
        }

        // A share consumer's first heartbeat is refused, and poll reports it
        try (Admin admin = Admin.create(config())) {
            admin.createTopics(List.of(new NewTopic("shared", 1, (short) 1))).all().get();
        }
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(config("group.id", "share-off",
                "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName()))) {
            consumer.subscribe(Set.of("shared"));
            assertThatThrownBy(() -> {
                long deadline = System.currentTimeMillis() + 30_000;
                while (System.currentTimeMillis() < deadline) {
                    consumer.poll(Duration.ofMillis(500));
                }
            }).isInstanceOf(UnsupportedVersionException.class)
                    .hasMessage("The cluster does not support the share group protocol. To use share groups, "
                            + "the cluster must have the share group protocol enabled.");
        }
    }

    @Test
    void shouldFailWithTheBrokerOutputWhenItCannotStart() {
        UpstreamKafka broken = UpstreamKafka.builder().config("num.io.threads", "-1").build();
        assertThatThrownBy(broken::start).isInstanceOf(AssertionError.class)
                .hasMessageContaining("formatting the upstream storage failed")
                .hasMessageContaining("Invalid value -1 for configuration num.io.threads");
        assertThat(broken.isAlive()).isFalse();
    }

    @Test
    void shouldServeShareGroupsWhenAskedTo() throws Exception {
        try (UpstreamKafka withShareGroups = UpstreamKafka.builder().shareGroups(true).start();
                Admin admin = Admin.create(withShareGroups.clientConfig())) {
            FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
            assertThat(features.finalizedFeatures().get("share.version").maxVersionLevel()).isEqualTo((short) 2);
            // the share-group API is served: an unknown group is not found, not unsupported
            assertThatThrownBy(() -> admin.describeShareGroups(List.of("nobody")).all().get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(GroupIdNotFoundException.class);

            withShareGroups.kill();
            assertThat(withShareGroups.isAlive()).isFalse();
        }
    }
}
