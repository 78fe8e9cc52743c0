package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fetch responses far larger than a socket write, sent from the segment files: every byte must
 * arrive, across segments, through a consumer with a small receive buffer; and a segment deleted
 * (by DeleteRecords or by retention) while its bytes are on the way must close only the
 * connection that was reading it.
 */
@Timeout(180)
class LargeFetchIT {
    private static final int RECORD_BYTES = 4096;
    private static final int SEGMENT_BYTES = 1024 * 1024;
    private static final int SMALL_RECEIVE_BUFFER = 4096;
    /** 16 MB of records: far more than the socket buffers between broker and client hold. */
    private static final int STALLED_RECORDS = 4096;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("log.retention.check.interval.ms", "100");

    @Test
    void shouldDeliverEveryByteOfFetchesLargerThanOneSocketWrite() throws Exception {
        // Given 8 MB of distinct records over 1 MB segments
        String topic = "large-fetch";
        int records = 2048;
        createTopic(topic);
        produce(topic, 0, records);

        // When a consumer with a 4 KB receive buffer fetches up to 8 MB per response
        TopicPartition tp = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (read.size() < records && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500)).forEach(read::add);
            }
        }

        // Then every record arrives once, in order, byte for byte
        assertThat(read).hasSize(records);
        for (int i = 0; i < records; i++) {
            assertThat(read.get(i).offset()).isEqualTo(i);
            assertThat(read.get(i).value()).as("value at offset %d", i).isEqualTo(value(i));
        }
    }

    @Test
    void shouldCloseOnlyTheReadingConnectionWhenDeleteRecordsRemovesItsSegmentMidFetch() throws Exception {
        String topic = "deleted-mid-fetch";
        assertStalledFetchEndsWhenSegmentsGo(topic, () -> {
            try (Admin admin = Admin.create(clientProps())) {
                TopicPartition tp = new TopicPartition(topic, 0);
                long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(STALLED_RECORDS)))
                        .lowWatermarks().get(tp).get().lowWatermark();
                assertThat(low).isEqualTo(STALLED_RECORDS);
            }
        });
    }

    @Test
    void shouldCloseOnlyTheReadingConnectionWhenRetentionRemovesItsSegmentMidFetch() throws Exception {
        String topic = "retained-mid-fetch";
        assertStalledFetchEndsWhenSegmentsGo(topic, () -> {
            try (Admin admin = Admin.create(clientProps())) {
                ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.bytes", "1"), AlterConfigOp.OpType.SET)))).all().get();
                // The next retention pass (every 100 ms here) deletes every closed segment.
                TopicPartition tp = new TopicPartition(topic, 0);
                Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> admin.listOffsets(
                        Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset() > 0);
            }
        });
    }

    /**
     * Given 16 MB over 1 MB segments and one raw fetch of all of it to a client that stops reading
     * after the size prefix, when {@code deleteSegments} removes the closed segments the stalled
     * transfer is in, then that connection ends before the announced size, and a new consumer
     * reads records produced afterwards.
     */
    private void assertStalledFetchEndsWhenSegmentsGo(String topic, Step deleteSegments) throws Exception {
        createTopic(topic);
        produce(topic, 0, STALLED_RECORDS);
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(SMALL_RECEIVE_BUFFER);
            socket.connect(address(), 5_000);
            socket.setSoTimeout(10_000);
            RequestHeader header = new RequestHeader(ApiKeys.FETCH, (short) 12, "it", 1);
            socket.getOutputStream().write(RawKafkaClient.frame(fetchAll(topic).serializeWithHeader(header)));
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            assertThat(size).isGreaterThan(STALLED_RECORDS * RECORD_BYTES);

            deleteSegments.run();

            assertThat(drain(in)).isLessThan(size);
        }

        produce(topic, STALLED_RECORDS, 10);
        TopicPartition tp = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, STALLED_RECORDS);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (read.size() < 10 && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        assertThat(read).extracting(ConsumerRecord::offset).startsWith((long) STALLED_RECORDS).hasSize(10);
        for (ConsumerRecord<byte[], byte[]> r : read) {
            assertThat(r.value()).isEqualTo(value((int) r.offset()));
        }
    }

    /** A test step that may throw. */
    private interface Step {
        void run() throws Exception;
    }

    /** Reads until the broker closes the connection; the bytes read after the size prefix. */
    private static long drain(InputStream in) throws IOException {
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        try {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                total += n;
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the connection stayed open after " + total + " bytes", e);
        } catch (IOException e) {
            // A reset is a close too.
        }
        return total;
    }

    private static FetchRequest fetchAll(String topic) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
                .setMaxBytes(Integer.MAX_VALUE).setIsolationLevel((byte) 0).setSessionId(0).setSessionEpoch(-1);
        data.topics().add(new FetchTopic().setTopic(topic).setPartitions(List.of(new FetchPartition()
                .setPartition(0).setFetchOffset(0).setPartitionMaxBytes(Integer.MAX_VALUE).setLogStartOffset(-1))));
        return new FetchRequest(data, (short) 12);
    }

    /** The value at {@code offset}: bytes no other offset has. */
    private static byte[] value(int offset) {
        byte[] v = new byte[RECORD_BYTES];
        new Random(offset).nextBytes(v);
        return v;
    }

    private static void createTopic(String topic) throws Exception {
        try (Admin admin = Admin.create(clientProps())) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("segment.bytes", Integer.toString(SEGMENT_BYTES))))).all().get();
        }
    }

    private static void produce(String topic, int from, int count) throws Exception {
        Properties p = clientProps();
        p.put("acks", "all");
        p.put("linger.ms", "5");
        p.put("batch.size", "65536");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = from; i < from + count; i++) {
                acks.add(producer.send(new ProducerRecord<>(topic, 0, null, value(i))));
            }
            for (int i = 0; i < acks.size(); i++) {
                assertThat(acks.get(i).get().offset()).isEqualTo(from + i);
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer() {
        Properties c = clientProps();
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        c.put("enable.auto.commit", "false");
        c.put("receive.buffer.bytes", Integer.toString(SMALL_RECEIVE_BUFFER));
        c.put("fetch.max.bytes", Integer.toString(16 * 1024 * 1024));
        c.put("max.partition.fetch.bytes", Integer.toString(8 * 1024 * 1024));
        return new KafkaConsumer<>(c);
    }

    private static InetSocketAddress address() {
        String hostPort = PIER.bootstrapServers();
        int colon = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    private static Properties clientProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        return p;
    }
}
