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
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage-fault policy (docs/reliability.md, "Storage faults") under I/O errors rather than a
 * full disk: an fsync of a partition log, and a write of the share-state log, fail with EIO. A
 * failed fsync loses what it should have made durable ({@link FaultyDisk#failForces}), so a broker
 * that confirmed before its fsync came back would show it as a lost record after the restart.
 */
@Timeout(120)
class StorageFaultEioIT {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dataDir;

    @Test
    void shouldStopOnAFailedFsyncOfAPartitionLogAndKeepExactlyTheAcknowledgedRecords() throws Exception {
        String topic = "fsync-eio";
        FaultyDisk disk = new FaultyDisk();
        int port = produceUntilAnFsyncFails(topic, disk);

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertThat(PartitionReader.readAll(again.bootstrapServers(), topic).values())
                    .as("the acknowledged records, and not the one whose fsync failed")
                    .containsExactlyElementsOf(values("f", 50));
            try (KafkaProducer<String, String> producer = producer(again.bootstrapServers())) {
                assertThat(producer.send(new ProducerRecord<>(topic, 0, null, "after")).get().offset())
                        .as("appends go on where the acknowledged data ends").isEqualTo(50);
            }
        }
    }

    @Test
    void shouldNotServeFromADeviceThatStillFailsItsFsyncsAndRecoverOnceItWorks() throws Exception {
        String topic = "fsync-eio-again";
        FaultyDisk disk = new FaultyDisk();
        int port = produceUntilAnFsyncFails(topic, disk);

        // The device still fails: the restart must not confirm anything, nor damage what is there.
        CountDownLatch stoppedAgain = new CountDownLatch(1);
        try (StderrTee log = StderrTee.start()) {
            assertThatThrownBy(() -> Pier.builder().dataDir(dataDir).port(port).fileIO(disk)
                    .onFatal(stoppedAgain::countDown).start().close())
                    .hasStackTraceContaining("Input/output error")
                    .hasStackTraceContaining(topic + "-0");
        }

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertThat(PartitionReader.readAll(again.bootstrapServers(), topic).values())
                    .containsExactlyElementsOf(values("f", 50));
        }
    }

    @Test
    void shouldStopOnAnIoErrorWritingShareStateAndKeepEveryConfirmedAcknowledgement() throws Exception {
        String topic = "eio-share";
        String group = "eio-share-group";
        FaultyDisk disk = new FaultyDisk();
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        int port = pier.port();
        Set<Long> accepted;
        try (StderrTee log = StderrTee.start()) {
            createTopic(pier.bootstrapServers(), topic);
            produce(pier.bootstrapServers(), topic, "s", 40);
            setEarliest(pier.bootstrapServers(), group);
            try (KafkaShareConsumer<String, String> consumer = shareConsumer(pier.bootstrapServers(), group, topic)) {
                accepted = acceptAcrossAFault(consumer, () -> disk.failWrites(dataDir.resolve("share-state")),
                        stopped, STOP_TIMEOUT);
            }
            assertThat(stopped.getCount()).as("broker stopped").isZero();
            assertThat(log.text()).contains("FATAL: ").contains("Input/output error");
            assertThat(disk.ioErrors()).isPositive();
        } finally {
            pier.close();
        }

        try (Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            assertOnlyTheUnconfirmedComeBack(again.bootstrapServers(), group, topic, accepted, 40);
        }
    }

    /**
     * Writes 50 acknowledged records to {@code topic}, then fails the fsyncs of its partition: the
     * next acks=all produce must not be acknowledged, and the broker must stop with its FATAL line.
     * Returns the port, for the restart.
     */
    private int produceUntilAnFsyncFails(String topic, FaultyDisk disk) throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(disk).onFatal(stopped::countDown).start();
        try (StderrTee log = StderrTee.start()) {
            createTopic(pier.bootstrapServers(), topic);
            try (KafkaProducer<String, String> producer = producer(pier.bootstrapServers())) {
                for (int i = 0; i < 50; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, "f" + i)).get();
                }
                disk.failForces(dataDir.resolve("logs").resolve(topic + "-0"));
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>(topic, 0, null, "not durable")).get())
                        .isInstanceOf(ExecutionException.class)
                        .satisfies(e -> System.err.println("CLIENT SAW: " + e.getCause()));
            }
            assertThat(stopped.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("broker stopped").isTrue();
            assertThat(log.text()).contains("FATAL: flush of a partition log failed; the broker stops acknowledging"
                    + " and shuts down").contains("Input/output error");
            assertThat(disk.ioErrors()).isPositive();
            return pier.port();
        } finally {
            pier.close();
        }
    }
}
