package io.pier.it.faults;

import static io.pier.it.faults.StorageFaultClients.acceptAcrossAFault;
import static io.pier.it.faults.StorageFaultClients.assertOnlyTheUnconfirmedComeBack;
import static io.pier.it.faults.StorageFaultClients.createTopic;
import static io.pier.it.faults.StorageFaultClients.produce;
import static io.pier.it.faults.StorageFaultClients.producer;
import static io.pier.it.faults.StorageFaultClients.setEarliest;
import static io.pier.it.faults.StorageFaultClients.shareConsumer;
import static io.pier.it.faults.StorageFaultClients.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.log.FaultyDisk;
import io.pier.server.Pier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage faults follow one policy (issue "Reliability campaign", item 4): when a write to the data
 * folder fails (here the disk fills up), the broker stops acknowledging and shuts down, saying why,
 * as Kafka does when its only log directory fails; nothing it acknowledged is lost, nothing half
 * written is served, and a restart once space is back recovers and goes on.
 */
@Timeout(120)
class StorageFaultIT {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dataDir;

    @Test
    void shouldStopOnAFullDiskDuringProduceAndKeepEveryAcknowledgedRecord() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        int port = pier.port();
        try {
            createTopic(pier.bootstrapServers(), "full-disk");
            try (KafkaProducer<String, String> producer = producer(pier.bootstrapServers())) {
                for (int i = 0; i < 50; i++) {
                    producer.send(new ProducerRecord<>("full-disk", 0, null, "r" + i)).get();
                }
                disk.fill();
                // Given no acknowledgement: the broker answers KAFKA_STORAGE_ERROR and goes down.
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>("full-disk", 0, null, "refused")).get())
                        .isInstanceOf(ExecutionException.class);
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(disk.refusedWrites()).isPositive();
        } finally {
            pier.close();
        }

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertThat(PartitionReader.readAll(again.bootstrapServers(), "full-disk").values())
                    .containsExactlyElementsOf(values("r", 50));
            try (KafkaProducer<String, String> producer = producer(again.bootstrapServers())) {
                assertThat(producer.send(new ProducerRecord<>("full-disk", 0, null, "after")).get().offset())
                        .as("appends go on where the acknowledged data ends").isEqualTo(50);
            }
        }
    }

    @Test
    void shouldStopOnAFullDiskDuringShareStateWritesAndKeepEveryConfirmedAcknowledgement() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        int port = pier.port();
        Set<Long> accepted;
        try {
            createTopic(pier.bootstrapServers(), "full-disk-share");
            produce(pier.bootstrapServers(), "full-disk-share", "s", 40);
            setEarliest(pier.bootstrapServers(), "full-disk-group");
            try (KafkaShareConsumer<String, String> consumer = shareConsumer(pier.bootstrapServers(), "full-disk-group", "full-disk-share")) {
                // The next state write (an acquisition or an acknowledgement) after the disk fills fails.
                accepted = acceptAcrossAFault(consumer, disk::fill, stopped, STOP_TIMEOUT);
            }
            assertThat(stopped.getCount()).as("broker stopped").isZero();
        } finally {
            pier.close();
        }

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertOnlyTheUnconfirmedComeBack(again.bootstrapServers(), "full-disk-group", "full-disk-share", accepted, 40);
        }
    }

    @Test
    void shouldStopWhenDeleteRecordsCannotWriteItsCheckpointAndKeepEveryRecord() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        int port = pier.port();
        TopicPartition tp = new TopicPartition("delete-records", 0);
        try (StderrTee log = StderrTee.start()) {
            createTopic(pier.bootstrapServers(), tp.topic());
            produce(pier.bootstrapServers(), tp.topic(), "d", 50);
            disk.fill();
            // The new log start offset is a checkpoint (temp file, fsync, rename): its temp file
            // finds no space, so nothing is deleted and the broker goes down.
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers(),
                    "default.api.timeout.ms", "6000", "request.timeout.ms", "3000"))) {
                assertThatThrownBy(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(20))).all().get())
                        .isInstanceOf(ExecutionException.class);
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(log.text()).contains("FATAL: DeleteRecords on delete-records-0 failed; the broker stops"
                    + " acknowledging and shuts down");
            assertThat(disk.refusedWrites()).isPositive();
        } finally {
            pier.close();
        }

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertThat(PartitionReader.readAll(again.bootstrapServers(), tp.topic()).values())
                    .containsExactlyElementsOf(values("d", 50));
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", again.bootstrapServers()))) {
                assertThat(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(20))).all()
                        .thenApply(v -> "deleted").get(30, TimeUnit.SECONDS)).as("DeleteRecords on real files")
                        .isEqualTo("deleted");
            }
            assertThat(PartitionReader.readAll(again.bootstrapServers(), tp.topic()).values())
                    .containsExactlyElementsOf(values("d", 50).subList(20, 50));
        }
    }

    @Test
    void shouldStopWhenARetentionPassCannotDeleteASegmentAndKeepEveryRecord() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).config("log.retention.check.interval.ms", "200")
                .onFatal(stopped::countDown).start();
        int port = pier.port();
        String topic = "retention";
        try (StderrTee log = StderrTee.start()) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("segment.bytes", "1024"))))
                        .all().get();
            }
            produce(pier.bootstrapServers(), topic, "t", 50); // a batch of ~80 bytes each: several segments
            disk.failDeletes();
            // Every segment but the active one is now past retention: the next pass deletes the
            // oldest, the device fails the delete, and the broker goes down.
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", pier.bootstrapServers()))) {
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(
                        new AlterConfigOp(new ConfigEntry("retention.ms", "1"), AlterConfigOp.OpType.SET))))
                        .all().get();
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(log.text()).contains("FATAL: retention of retention-0 failed; the broker stops acknowledging"
                    + " and shuts down");
            assertThat(disk.failedDeletes()).isPositive();
        } finally {
            pier.close();
        }

        // Restarted with retention passes far apart (the default, 5 minutes), so that what is read
        // is what the failed pass left.
        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertThat(PartitionReader.readAll(again.bootstrapServers(), topic).values())
                    .containsExactlyElementsOf(values("t", 50));
            try (KafkaProducer<String, String> producer = producer(again.bootstrapServers())) {
                assertThat(producer.send(new ProducerRecord<>(topic, 0, null, "after")).get().offset())
                        .as("appends go on where the data ends").isEqualTo(50);
            }
        }
    }
}
