package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(120)
class ProduceConsumeIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    static Properties producerProps(String compression) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("compression.type", compression);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("max.request.size", "2000000");
        return p;
    }

    static KafkaConsumer<byte[], byte[]> consumer() {
        Properties c = new Properties();
        c.put("bootstrap.servers", PIER.bootstrapServers());
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        c.put("max.partition.fetch.bytes", "2000000");
        return new KafkaConsumer<>(c);
    }

    record Sent(byte[] key, byte[] value, List<RecordHeader> headers, long offset) {}

    @ParameterizedTest
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void shouldReadBackExactlyTheAcknowledgedRecordsInOrder(String compression) throws Exception {
        String topic = "roundtrip-" + compression;
        try (Admin admin = Admin.create(producerProps(compression))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        List<Sent> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(compression))) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            List<Sent> pending = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                byte[] key = i % 7 == 0 ? null : ("k" + i).getBytes(StandardCharsets.UTF_8);
                byte[] value = i % 11 == 0 ? null : ("value-" + i).getBytes(StandardCharsets.UTF_8);
                List<RecordHeader> headers = i % 3 == 0
                        ? List.of(new RecordHeader("h" + i, ("hv" + i).getBytes(StandardCharsets.UTF_8)))
                        : List.of();
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, key, value, new ArrayList<>(headers));
                futures.add(producer.send(record));
                pending.add(new Sent(key, value, headers, -1));
            }
            byte[] big = new byte[900 * 1024];
            Arrays.fill(big, (byte) 'x');
            futures.add(producer.send(new ProducerRecord<>(topic, 0, "big".getBytes(StandardCharsets.UTF_8), big)));
            pending.add(new Sent("big".getBytes(StandardCharsets.UTF_8), big, List.of(), -1));
            for (int i = 0; i < futures.size(); i++) {
                RecordMetadata md = futures.get(i).get();
                Sent p = pending.get(i);
                sent.add(new Sent(p.key(), p.value(), p.headers(), md.offset()));
            }
        }
        assertThat(sent).extracting(Sent::offset).doesNotHaveDuplicates().isSorted();

        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < sent.size() && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
            }
        }
        assertThat(got).hasSize(sent.size());
        for (int i = 0; i < sent.size(); i++) {
            Sent s = sent.get(i);
            ConsumerRecord<byte[], byte[]> r = got.get(i);
            assertThat(r.offset()).isEqualTo(s.offset());
            assertThat(r.key()).isEqualTo(s.key());
            assertThat(r.value()).isEqualTo(s.value());
            assertThat(r.headers().toArray()).hasSize(s.headers().size());
            for (RecordHeader h : s.headers()) {
                assertThat(r.headers().lastHeader(h.key()).value()).isEqualTo(h.value());
            }
        }
    }

    @Test
    void shouldLongPollUntilDataArrives() throws Exception {
        String topic = "long-poll";
        try (Admin admin = Admin.create(producerProps("none"))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        try (KafkaConsumer<byte[], byte[]> consumer = consumer();
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps("none"))) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            assertThat(consumer.poll(Duration.ofMillis(300))).isEmpty();
            producer.send(new ProducerRecord<>(topic, 0, null, "late".getBytes(StandardCharsets.UTF_8))).get();
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 10_000;
            while (got.isEmpty() && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(500)).forEach(got::add);
            }
            assertThat(got).singleElement().satisfies(r ->
                    assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("late"));
        }
    }
}
