package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.HeartbeatRequest;
import io.pier.log.FaultyDisk;
import io.pier.log.FileIO;
import io.pier.share.AckBatch;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.Set;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dead letter whose append fails for a reason that passes must not cost the letter (issue 39):
 * the record stays ARCHIVING, tried again, and gets exactly one letter once the queue can be
 * written. Here the queue's folder is full: the append fails with KAFKA_STORAGE_ERROR, which a
 * running broker answers by stopping; the hand-driven broker only takes note, so the test can
 * watch what the failed append left behind, then starts the broker again on the same, now
 * writable, data. Before the fix the record was archived without its letter at once.
 */
class DeadLetterRetryTest {
    private static final String TOPIC = "orders";
    private static final String QUEUE = "dlq.orders";
    private static final String GROUP = "g";
    private static final TopicPartition SOURCE = new TopicPartition(TOPIC, 0);
    private static final TopicPartition QUEUE_0 = new TopicPartition(QUEUE, 0);

    @TempDir
    Path dir;

    @Test
    void shouldKeepARecordArchivingUntilItsLetterIsWrittenWhenTheQueueAppendFailsForAPassingReason()
            throws Exception {
        FaultyDisk disk = new FaultyDisk();
        SharePartitionKey key;
        try (HandDrivenServices broker = new HandDrivenServices(dir, 1, null, Map.of(), disk)) {
            key = rejectOneOfThree(broker, () -> disk.fill(dir.resolve("logs").resolve(QUEUE + "-0")));
            assertThat(broker.takeFatal()).as("the queue append failed").containsExactly("append to " + QUEUE_0
                    + " failed");

            // Tried again, backing off, while the queue stays unwritable: never archived without it.
            for (int i = 0; i < 6; i++) {
                broker.agents.advance(DeadLetters.RETRY_MAX_MS);
                broker.agents.runUntilIdle();
            }
            assertThat(disk.refusedWrites()).as("appends refused").isPositive();
            assertThat(startOffset(broker, key)).as("the REJECTed record still ARCHIVING holds the start offset")
                    .isEqualTo(1);
            assertThat(letters(broker)).as("letters while the queue cannot be written").isEmpty();
            broker.takeFatal();
        }

        // The restart the storage error stops the broker for, on the disk with space again.
        try (HandDrivenServices broker = new HandDrivenServices(dir, 1, null, Map.of(), FileIO.REAL)) {
            broker.agents.runUntilIdle();
            broker.agents.advance(DeadLetters.RETRY_MAX_MS);
            broker.agents.runUntilIdle();
            assertThat(letters(broker)).as("the one letter, after the restart").containsExactly("1:bad");
            assertThat(startOffset(broker, key)).as("archived once lettered").isEqualTo(3);
        }
    }

    /**
     * A gateway's queue is remote: an append may land though its answer is lost. The first append
     * here lands and is then reported as timed out; the retry must look the letter up and find it,
     * not write it a second time. Without the lookup (a queue that says nothing lands after a
     * failure) the record got two letters.
     */
    @Test
    void shouldLookUpTheLettersOfAnAppendWhoseAnswerWasLostBeforeWritingThemAgain() throws Exception {
        try (HandDrivenServices broker = new HandDrivenServices(dir, 1, null, Map.of(), FileIO.REAL)) {
            DeadLetterQueues local = DeadLetterQueues.local(broker.services.topics(), broker.services.logs());
            int[] appends = {0};
            broker.services.deadLetterQueues(new DeadLetterQueues() {
                @Override
                public Queue find(String name) {
                    return local.find(name);
                }

                @Override
                public CompletableFuture<Void> create(String name, int partitions, Map<String, String> configs) {
                    return local.create(name, partitions, configs);
                }

                @Override
                public CompletableFuture<Appended> append(TopicPartition queue, List<SimpleRecord> letters) {
                    CompletableFuture<Appended> landed = local.append(queue, letters);
                    return appends[0]++ > 0 ? landed : landed.thenApply(a ->
                            new Appended(Errors.REQUEST_TIMED_OUT, "the answer was lost"));
                }

                @Override
                public CompletableFuture<Set<String>> inQueue(TopicPartition queue, String groupId,
                        TopicPartition source, Set<String> candidates) {
                    return local.inQueue(queue, groupId, source, candidates);
                }

                @Override
                public boolean mayLandAfterFailure() {
                    return true;
                }
            });
            SharePartitionKey key = rejectOneOfThree(broker, () -> { });
            for (int i = 0; i < 4; i++) {
                broker.agents.advance(DeadLetters.RETRY_MAX_MS);
                broker.agents.runUntilIdle();
            }
            assertThat(appends[0]).as("appends").isEqualTo(1);
            assertThat(letters(broker)).as("the one letter").containsExactly("1:bad");
            assertThat(startOffset(broker, key)).as("archived once its letter was found").isEqualTo(3);
        }
    }

    /**
     * A share group with a queue, three records acquired, the middle one REJECTed (after {@code
     * beforeAcknowledge}), and the agents run until idle; returns the share-partition.
     */
    private static SharePartitionKey rejectOneOfThree(HandDrivenServices broker, Runnable beforeAcknowledge)
            throws Exception {
        TopicMetadata topic = broker.agents.await(broker.services.topics().create(TOPIC, 1, Map.of(), false));
        broker.agents.await(broker.services.topics().create(QUEUE, 1,
                Map.of("errors.deadletterqueue.group.enable", "true"), false));
        assertThat(broker.agents.await(broker.services.shareGroups().alterConfig(GROUP,
                Map.of("share.auto.offset.reset", "earliest", "errors.deadletterqueue.topic.name", QUEUE,
                        "errors.deadletterqueue.copy.record.enable", "true"), false))
                .error()).isEqualTo(Errors.NONE);
        assertThat(broker.agents.await(broker.services.shareGroups().heartbeat(new HeartbeatRequest(GROUP, "m",
                HeartbeatRequest.JOIN_EPOCH, null, List.of(TOPIC), "test", "/127.0.0.1"))).error())
                .isEqualTo(Errors.NONE);
        SharePartitionKey key = new SharePartitionKey(GROUP, topic.id(), 0);
        for (String value : List.of("a", "bad", "c")) {
            MemoryRecords batch = MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(broker.clock.wallMs(), null, value.getBytes()));
            assertThat(broker.agents.await(broker.services.logs().append(SOURCE, batch)).error())
                    .isEqualTo(Errors.NONE);
        }
        assertThat(broker.agents.await(broker.services.shares().acquire(SOURCE, key, "m",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null)).recordCount())
                .isEqualTo(3);
        beforeAcknowledge.run();
        assertThat(broker.agents.await(broker.services.shares().acknowledge(SOURCE, key, "m", List.of(
                AckBatch.of(0, 0, AcknowledgeType.ACCEPT), AckBatch.of(1, 1, AcknowledgeType.REJECT),
                AckBatch.of(2, 2, AcknowledgeType.ACCEPT))))).as("the acknowledgements").isEqualTo(Errors.NONE);
        broker.agents.runUntilIdle();
        return key;
    }

    private static long startOffset(HandDrivenServices broker, SharePartitionKey key) throws Exception {
        return broker.agents.await(broker.services.shareOffsets().summary(SOURCE, key)).startOffset();
    }

    /** The letters in the queue, each as {@code sourceOffset:value}. */
    private static List<String> letters(HandDrivenServices broker) throws Exception {
        List<String> out = new ArrayList<>();
        MemoryRecords read = broker.services.logs().partition(QUEUE_0).log().read(0, 1 << 20, true).records();
        for (RecordBatch batch : read.batches()) {
            for (Record r : batch) {
                String offset = null;
                for (Header h : r.headers()) {
                    if (h.key().equals("__dlq.errors.offset")) {
                        offset = new String(h.value());
                    }
                }
                byte[] value = new byte[r.valueSize()];
                r.value().get(value);
                out.add(offset + ":" + new String(value));
            }
        }
        return out;
    }
}
