package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.share.ScrapedMetrics;
import io.pier.server.Pier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code queued.max.request.bytes} under load from real producers: several of them pipeline large
 * produce requests into a budget that holds about one of them at a time. Connections stop being
 * read while the budget is spent and go on when answers give it back: every record is
 * acknowledged and stored, none lost, nothing stuck.
 */
@Timeout(180)
class QueuedRequestBytesIT {
    private static final int PRODUCERS = 6;
    private static final int RECORDS_PER_PRODUCER = 120;
    private static final int RECORD_BYTES = 100 * 1024;
    private static final int BUDGET = 1024 * 1024;

    @Test
    void shouldAcknowledgeAndStoreEveryRecordWhenTheRequestsOutgrowTheBudget() throws Exception {
        try (Pier pier = Pier.builder()
                .config("socket.request.max.bytes", String.valueOf(BUDGET))
                .config("queued.max.request.bytes", String.valueOf(BUDGET))
                .start();
                Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, pier.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("budget", 4, (short) 1))).all().get(30, TimeUnit.SECONDS);

            List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            try {
                for (int p = 0; p < PRODUCERS; p++) {
                    producers.add(new KafkaProducer<>(producerProps(pier.bootstrapServers())));
                }
                byte[] value = new byte[RECORD_BYTES];
                // Round-robin over the producers, so all of them have requests in flight at once.
                for (int i = 0; i < RECORDS_PER_PRODUCER; i++) {
                    for (KafkaProducer<byte[], byte[]> producer : producers) {
                        sends.add(producer.send(new ProducerRecord<>("budget", i % 4, null, value)));
                    }
                }
                for (Future<RecordMetadata> send : sends) {
                    send.get(120, TimeUnit.SECONDS);
                }
            } finally {
                for (KafkaProducer<byte[], byte[]> producer : producers) {
                    producer.close();
                }
            }

            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            for (int partition = 0; partition < 4; partition++) {
                ends.put(new TopicPartition("budget", partition), OffsetSpec.latest());
            }
            long stored = admin.listOffsets(ends).all().get(30, TimeUnit.SECONDS).values().stream()
                    .mapToLong(info -> info.offset()).sum();
            assertThat(stored).isEqualTo((long) PRODUCERS * RECORDS_PER_PRODUCER);

            ScrapedMetrics metrics = ScrapedMetrics.scrape(pier.metricsPort());
            assertThat(metrics.value("pier_queued_request_bytes_waits_total"))
                    .as("connections stopped reading for the budget").isPositive();
            assertThat(metrics.value("pier_queued_request_bytes")).as("every request answered, every byte back")
                    .isZero();
        }
    }

    private static Properties producerProps(String bootstrap) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        // Requests of up to ~512 KB, five in flight per producer: far more than the 1 MiB budget.
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 512 * 1024);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return props;
    }
}
