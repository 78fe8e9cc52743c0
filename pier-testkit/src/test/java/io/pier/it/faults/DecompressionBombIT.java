package io.pier.it.faults;

import static io.pier.it.faults.CompressedBatches.MIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.it.ChildBroker;
import io.pier.it.RawKafkaClient;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.internals.ByteUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Decompression bombs and lying compressed batches, produced over the wire to a child broker with
 * a 128 MiB heap that exits on OutOfMemoryError (issue 39). A bomb inflates to 1.6 to 16 times
 * that heap: if the broker held what it inflates, the broker would be gone, which every test checks
 * after it (and a produce and a fetch still served). Each topic has max.message.bytes of 1 MiB,
 * so the broker refuses what inflates past 64 MiB (BatchValidator.MAX_INFLATION).
 *
 * <p>Snappy encodes at most about 21 bytes per byte, so no snappy batch within max.message.bytes
 * reaches the 64-fold limit; its bomb is a block that claims a size it cannot have.
 */
@Timeout(120)
class DecompressionBombIT {
    private static final int MAX_MESSAGE_BYTES = MIB;
    /** What the broker lets a batch inflate to: 64 times max.message.bytes. */
    private static final long INFLATION_LIMIT = 64L * MAX_MESSAGE_BYTES;
    private static final short PRODUCE_VERSION = 12;
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path scratch;

    private static ChildBroker broker;
    private static Path gcLog;
    private static Admin admin;
    private static int topics;
    /** Where every refused batch is sent, between two plain records that must end up adjacent. */
    private static String refusals;
    /** One consumer for every read: a new one per read cost more than the cases themselves. */
    private static KafkaConsumer<byte[], byte[]> consumer;
    private int correlationId;

    @BeforeAll
    static void startBroker() throws IOException {
        Path data = Files.createDirectories(scratch.resolve("data"));
        Path logs = Files.createDirectories(scratch.resolve("logs"));
        gcLog = logs.resolve("gc.log");
        broker = ChildBroker.withJvmOptions(data, logs, List.of("-Xmx128m", "-XX:+ExitOnOutOfMemoryError",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xlog:gc:file=" + gcLog));
        broker.start(1);
        Properties p = new Properties();
        p.put("bootstrap.servers", broker.bootstrapServers());
        admin = Admin.create(p);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        consumer = new KafkaConsumer<>(p);
    }

    @AfterAll
    static void stopBroker() throws InterruptedException {
        if (consumer != null) {
            consumer.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
            printHeapFigures();
        }
    }

    /** The broker's heap as its collector saw it over the whole run, for reliability.md. */
    private static void printHeapFigures() {
        long peakBefore = 0;
        long peakAfter = 0;
        int collections = 0;
        try {
            Pattern pause = Pattern.compile("(\\d+)M->(\\d+)M\\((\\d+)M\\)");
            for (String line : Files.readAllLines(gcLog)) {
                Matcher m = pause.matcher(line);
                if (m.find()) {
                    collections++;
                    peakBefore = Math.max(peakBefore, Long.parseLong(m.group(1)));
                    peakAfter = Math.max(peakAfter, Long.parseLong(m.group(2)));
                }
            }
        } catch (IOException e) {
            System.out.println("no GC log: " + e);
            return;
        }
        System.out.printf("broker heap over the run: %d collections, at most %d MiB used before one and %d MiB after%n",
                collections, peakBefore, peakAfter);
    }

    /** The refusals read their topic back themselves; this shows the broker up and appending after every case. */
    @AfterEach
    void brokerStillServes() throws Exception {
        broker.assertAlive();
        if (refusals == null) {
            refusals = newTopic("refusals");
        }
        assertThat(produce(refusals, plain("alive")).errorCode()).isEqualTo(Errors.NONE.code());
    }

    // ---- 1. bombs ----

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
    void bombOfManyRecordsIsRefusedAsTooLarge(CompressionType codec) throws Exception {
        // 1 MiB records of zeros, as many as fit max.message.bytes once compressed
        int records = switch (codec) {
            case GZIP -> 900;
            case LZ4 -> 200;
            default -> 1024;
        };
        assertThat(records * (long) MIB).isGreaterThan(3 * INFLATION_LIMIT);
        MemoryRecords bomb = timed("many-record bomb " + codec,
                () -> CompressedBatches.zeroRecords(codec, records, MIB), records * (long) MIB);
        assertRefusedAndLogUnchanged("many-" + codec, bomb, Errors.MESSAGE_TOO_LARGE);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
    void bombOfOneHugeRecordIsRefusedAsTooLarge(CompressionType codec) throws Exception {
        int valueBytes = switch (codec) {
            case GZIP -> 900 * MIB;
            case LZ4 -> 200 * MIB;
            default -> 2000 * MIB;
        };
        assertThat((long) valueBytes).isGreaterThan(3 * INFLATION_LIMIT);
        MemoryRecords bomb = timed("one-record bomb " + codec,
                () -> CompressedBatches.oneZeroRecord(codec, valueBytes, valueBytes), valueBytes);
        assertRefusedAndLogUnchanged("one-" + codec, bomb, Errors.MESSAGE_TOO_LARGE);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
    void bombOfOneRecordIsRefusedOnceItInflatesPastTheLimit(CompressionType codec) throws Exception {
        // The value claims more than the stream holds: a broker that inflates each record to its
        // end before weighing it reaches the end of the stream (INVALID_RECORD); one that stops at
        // the limit never gets there.
        int written = switch (codec) {
            case GZIP -> 900 * MIB;
            case LZ4 -> 200 * MIB;
            default -> 1024 * MIB;
        };
        assertThat((long) written).isGreaterThan(3 * INFLATION_LIMIT);
        MemoryRecords bomb = timed("cut one-record bomb " + codec,
                () -> CompressedBatches.oneZeroRecord(codec, 2000 * MIB, written), written);
        assertRefusedAndLogUnchanged("cut-" + codec, bomb, Errors.MESSAGE_TOO_LARGE);
    }

    @Test
    void snappyBlockClaimingAGibibyteIsCorrupt() throws Exception {
        assertRefusedAndLogUnchanged("snappy-claim", CompressedBatches.lyingSnappyBlock(1 << 30),
                Errors.CORRUPT_MESSAGE);
    }

    // ---- 2. batches whose counts or lengths lie ----

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void headerCountingMoreRecordsThanTheStreamHoldsIsInvalid(CompressionType codec) throws Exception {
        MemoryRecords batch = CompressedBatches.craft(codec, 5, sink -> writeRecords(sink.out, 3));
        assertRefusedAndLogUnchanged("count-high-" + codec, batch, Errors.INVALID_RECORD);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void headerCountingFewerRecordsThanTheStreamHoldsIsInvalid(CompressionType codec) throws Exception {
        MemoryRecords batch = CompressedBatches.craft(codec, 2, sink -> writeRecords(sink.out, 3));
        assertRefusedAndLogUnchanged("count-low-" + codec, batch, Errors.INVALID_RECORD);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void valueClaimingMoreBytesThanInflateIsInvalid(CompressionType codec) throws Exception {
        // the record and its value claim 1 MiB; 100 zeros follow, then the stream ends
        MemoryRecords batch = CompressedBatches.oneZeroRecord(codec, MIB, 100);
        assertRefusedAndLogUnchanged("value-long-" + codec, batch, Errors.INVALID_RECORD);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void recordClaimingMoreBytesThanItsFieldsIsInvalid(CompressionType codec) throws Exception {
        // a whole, valid record whose length prefix alone says 50 bytes more (the lie is by hand)
        MemoryRecords batch = CompressedBatches.craft(codec, 1, sink -> {
            DataOutputStream out = sink.out;
            ByteArrayOutputStream one = new ByteArrayOutputStream();
            DefaultRecord.writeTo(new DataOutputStream(one), 0, 0L, null,
                    ByteBuffer.wrap("liar".getBytes(StandardCharsets.UTF_8)), new Header[0]);
            ByteBuffer record = ByteBuffer.wrap(one.toByteArray());
            int body = ByteUtils.readVarint(record);
            ByteUtils.writeVarint(body + 50, out);
            out.write(record.array(), record.position(), record.remaining());
        });
        assertRefusedAndLogUnchanged("length-long-" + codec, batch, Errors.INVALID_RECORD);
    }

    // ---- 3. large, but within the limit ----

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void batchJustUnderTheLimitIsAcceptedAndReadBack(CompressionType codec) throws Exception {
        // snappy's 21-fold ratio: 16 MiB is what fits 1 MiB compressed
        int records = codec == CompressionType.SNAPPY ? 16 : 60;
        assertThat(records * (long) (MIB + 16)).isLessThan(INFLATION_LIMIT);
        MemoryRecords batch = timed("legitimate batch " + codec,
                () -> CompressedBatches.patterned(codec, records, MIB), records * (long) MIB);
        assertThat(batch.sizeInBytes()).isLessThan(MAX_MESSAGE_BYTES);
        String topic = newTopic("under-" + codec);
        PartitionProduceResponse response = produce(topic, batch);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NONE);
        List<byte[]> read = read(topic, 0, records);
        assertThat(read).hasSize(records);
        for (int i = 0; i < records; i++) {
            assertThat(read.get(i)).as("record %d", i).isEqualTo(CompressedBatches.patternedValue(i, MIB));
        }
    }

    // ---- 4. the stock producer ----

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void stockProducerSendsAValueOverTheLimitThatCompressesUnderIt(CompressionType codec) throws Exception {
        String topic = newTopic("producer-" + codec);
        byte[] value = new byte[MAX_MESSAGE_BYTES + 1024];
        // With max.request.size at its default (1 MiB) the producer refuses the record itself,
        // from its uncompressed size, before any request: the broker is not asked.
        try (KafkaProducer<byte[], byte[]> producer = producer(codec, MIB)) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, value)).get())
                    .hasCauseInstanceOf(RecordTooLargeException.class);
        }
        // Raised, it sends a batch of a few KB; the broker judges the compressed size, as Kafka does.
        try (KafkaProducer<byte[], byte[]> producer = producer(codec, 8 * MIB)) {
            RecordMetadata sent = producer.send(new ProducerRecord<>(topic, value)).get();
            assertThat(sent.offset()).isZero();
        }
        assertThat(read(topic, 0, 1)).singleElement().satisfies(v -> assertThat(v).isEqualTo(value));
    }

    // ---- helpers ----

    private void assertRefusedAndLogUnchanged(String name, MemoryRecords batch, Errors expected) throws Exception {
        if (refusals == null) {
            refusals = newTopic("refusals");
        }
        String topic = refusals;
        PartitionProduceResponse before = produce(topic, plain("before " + name));
        assertThat(before.errorCode()).isEqualTo(Errors.NONE.code());
        long start = System.nanoTime();
        PartitionProduceResponse refused = produce(topic, batch);
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("%s: %,d bytes on the wire answered %s in %d ms (%s)%n", name, batch.sizeInBytes(),
                Errors.forCode(refused.errorCode()), ms, refused.errorMessage());
        assertThat(batch.sizeInBytes()).isLessThanOrEqualTo(MAX_MESSAGE_BYTES);
        assertThat(Errors.forCode(refused.errorCode())).as(refused.errorMessage()).isEqualTo(expected);
        broker.assertAlive();
        PartitionProduceResponse after = produce(topic, plain("after " + name));
        assertThat(after.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(after.baseOffset()).as("the refused batch took no offset").isEqualTo(before.baseOffset() + 1);
        assertThat(values(topic, before.baseOffset(), 2)).containsExactly("before " + name, "after " + name);
    }

    @FunctionalInterface
    private interface BatchMaker {
        MemoryRecords make() throws IOException;
    }

    private static MemoryRecords timed(String what, BatchMaker maker, long inflatedBytes) throws IOException {
        long start = System.nanoTime();
        MemoryRecords batch = maker.make();
        System.out.printf("%s: %,d bytes inflate to %,d (built in %d ms)%n", what, batch.sizeInBytes(), inflatedBytes,
                (System.nanoTime() - start) / 1_000_000);
        return batch;
    }

    private static void writeRecords(DataOutputStream out, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            DefaultRecord.writeTo(out, i, 0L, null, ByteBuffer.wrap(("r" + i).getBytes(StandardCharsets.UTF_8)),
                    new Header[0]);
        }
    }

    private static MemoryRecords plain(String value) {
        return MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(System.currentTimeMillis(), null, value.getBytes(StandardCharsets.UTF_8)));
    }

    private static String newTopic(String name) throws ExecutionException, InterruptedException {
        String topic = "bomb-" + name.toLowerCase(Locale.ROOT) + "-" + (topics++);
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                .configs(Map.of("max.message.bytes", Integer.toString(MAX_MESSAGE_BYTES))))).all().get();
        return topic;
    }

    private PartitionProduceResponse produce(String topic, MemoryRecords records) throws IOException {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
        TopicProduceData topicData = new TopicProduceData().setName(topic);
        topicData.partitionData().add(new PartitionProduceData().setIndex(0).setRecords(records));
        data.topicData().add(topicData);
        ProduceRequest request = new ProduceRequest.Builder(PRODUCE_VERSION, PRODUCE_VERSION, data)
                .build(PRODUCE_VERSION);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, PRODUCE_VERSION, "bomb", correlationId++);
        try (RawKafkaClient client = RawKafkaClient.connect(broker.bootstrapServers(), ANSWER_TIMEOUT)) {
            client.send(header, request);
            ProduceResponse response = (ProduceResponse) client.receiveResponse(header);
            List<PartitionProduceResponse> partitions =
                    response.data().responses().iterator().next().partitionResponses();
            assertThat(partitions).hasSize(1);
            return partitions.get(0);
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(CompressionType codec, int maxRequestSize) {
        Properties p = new Properties();
        p.put("bootstrap.servers", broker.bootstrapServers());
        p.put("compression.type", codec.name);
        p.put("max.request.size", Integer.toString(maxRequestSize));
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    private static List<String> values(String topic, long from, int expected) throws Exception {
        return read(topic, from, expected).stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList();
    }

    /**
     * Reads the partition from offset {@code from} to the end as it is now: at least
     * {@code expected} values are awaited (10 s at most), and any beyond the end are not.
     */
    private static List<byte[]> read(String topic, long from, int expected) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
        consumer.assign(List.of(tp));
        consumer.seek(tp, from);
        List<byte[]> values = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 10_000;
        while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                if (r.offset() < end) {
                    values.add(r.value());
                }
            }
        }
        assertThat(values).as("records read from %s at %d before offset %d", topic, from, end).hasSize(expected);
        return values;
    }
}
