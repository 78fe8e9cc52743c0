package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.server.Pier;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment whose tail was torn (garbage after the last batch, or the last batch cut short) is
 * repaired on start: the broker serves every whole batch before the tear and appends after it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TornTailIT {
    private static final String TOPIC = "torn";
    private static final int RECORDS = 50;
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
    private static final String SEGMENT = "00000000000000000000.log";
    private static final String RECOVERY_POINT = "recovery-point.checkpoint";

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void shouldDropGarbageAppendedAfterTheLastBatch() throws Exception {
        // Given 50 acknowledged records, one batch each, and a clean shutdown
        AckedRecords acked = produceOneBatchPerRecord();
        Path segment = partitionDir().resolve(SEGMENT);
        long cleanSize = Files.size(segment);

        // When random bytes land after the last batch
        byte[] garbage = new byte[137];
        new Random(42).nextBytes(garbage);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(garbage));
        }

        // Then the broker starts, cuts the garbage, serves all 50 and appends at offset 50
        try (Pier pier = start()) {
            assertThat(Files.size(segment)).isEqualTo(cleanSize);
            Map<Integer, List<ConsumerRecord<String, String>>> log =
                    AckedRecords.readAll(pier.bootstrapServers(), TOPIC, 1, READ_TIMEOUT);
            assertThat(log.get(0)).hasSize(RECORDS);
            AckedRecords.assertLogMatches(acked.all(), log);
            assertThat(produceOne(pier, "after-tear").offset()).isEqualTo(RECORDS);
        }
    }

    @Test
    void shouldCutABatchTornMidWayAfterTheRecoveryPoint() throws Exception {
        // Given 50 records, and the recovery checkpoint as a crash before its next update would leave it
        Path checkpointAtCreate = scratch.resolve(RECOVERY_POINT);
        AckedRecords acked = produceOneBatchPerRecord(checkpointAtCreate);
        Path segment = partitionDir().resolve(SEGMENT);
        long cleanSize = Files.size(segment);
        long lastBatchStart = lastBatchPosition(segment);
        Files.copy(checkpointAtCreate, partitionDir().resolve(RECOVERY_POINT),
                StandardCopyOption.REPLACE_EXISTING);

        // When the last batch is cut in the middle
        long tornSize = lastBatchStart + (cleanSize - lastBatchStart) / 2;
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.truncate(tornSize);
        }

        // Then the broker starts, serves the 49 whole batches and gives offset 49 to the next record
        try (Pier pier = start()) {
            assertThat(Files.size(segment)).isEqualTo(lastBatchStart);
            Map<Integer, List<ConsumerRecord<String, String>>> log =
                    AckedRecords.readAll(pier.bootstrapServers(), TOPIC, 1, READ_TIMEOUT);
            List<AckedRecords.Ack> beforeTear = acked.all().stream().filter(a -> a.offset() < RECORDS - 1).toList();
            assertThat(log.get(0)).hasSize(RECORDS - 1);
            AckedRecords.assertLogMatches(beforeTear, log);
            assertThat(produceOne(pier, "after-tear").offset()).isEqualTo(RECORDS - 1);
            Map<Integer, List<ConsumerRecord<String, String>>> again =
                    AckedRecords.readAll(pier.bootstrapServers(), TOPIC, 1, READ_TIMEOUT);
            assertThat(again.get(0)).hasSize(RECORDS);
            assertThat(again.get(0).get(RECORDS - 1).value()).isEqualTo("after-tear");
        }
    }

    @Test
    void shouldRefuseToStartWhenDataRecordedAsFsyncedIsCut() throws Exception {
        // Given a clean shutdown, which records the whole segment as fsynced
        produceOneBatchPerRecord();
        Path segment = partitionDir().resolve(SEGMENT);

        // When the segment loses bytes the checkpoint vouches for
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.truncate(Files.size(segment) - 10);
        }

        // Then the broker refuses to start rather than serve a log that lost acknowledged data
        assertThatThrownBy(this::start).hasStackTraceContaining("fsynced");

        // ...and, in the same JVM, starts once an operator drops the checkpoint to accept the loss
        Files.delete(partitionDir().resolve(RECOVERY_POINT));
        try (Pier pier = start()) {
            assertThat(AckedRecords.readAll(pier.bootstrapServers(), TOPIC, 1, READ_TIMEOUT).get(0))
                    .hasSize(RECORDS - 1);
        }
    }

    private AckedRecords produceOneBatchPerRecord() throws Exception {
        return produceOneBatchPerRecord(null);
    }

    /** Creates the topic, optionally copies its fresh recovery checkpoint, produces and shuts down. */
    private AckedRecords produceOneBatchPerRecord(Path copyCheckpointTo) throws Exception {
        AckedRecords acked = new AckedRecords();
        try (Pier pier = start()) {
            try (Admin admin = Admin.create(AckedRecords.producerProps(pier.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            }
            if (copyCheckpointTo != null) {
                Files.copy(partitionDir().resolve(RECOVERY_POINT), copyCheckpointTo);
            }
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(AckedRecords.producerProps(pier.bootstrapServers()))) {
                for (int i = 0; i < RECORDS; i++) {
                    String value = "rec-" + i;
                    acked.add(value, producer.send(new ProducerRecord<>(TOPIC, 0, null, value)).get(30, TimeUnit.SECONDS));
                }
            }
        }
        assertThat(acked.all()).extracting(AckedRecords.Ack::offset).first().isEqualTo(0L);
        return acked;
    }

    private RecordMetadata produceOne(Pier pier, String value) throws Exception {
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(AckedRecords.producerProps(pier.bootstrapServers()))) {
            return producer.send(new ProducerRecord<>(TOPIC, 0, null, value)).get(30, TimeUnit.SECONDS);
        }
    }

    private Pier start() throws Exception {
        return Pier.builder().dataDir(dataDir).start();
    }

    private Path partitionDir() {
        return dataDir.resolve("logs").resolve(TOPIC + "-0");
    }

    /** Walks the v2 batch headers (base offset int64, then length int32 of the rest). */
    private static long lastBatchPosition(Path segment) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(12);
        long position = 0;
        long last = -1;
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            long size = ch.size();
            for (int batches = 0; position + 12 <= size && batches <= RECORDS; batches++) {
                header.clear();
                ch.read(header, position);
                last = position;
                position += 12 + header.getInt(8);
            }
            assertThat(position).as("batches fill the segment exactly").isEqualTo(size);
        }
        return last;
    }
}
