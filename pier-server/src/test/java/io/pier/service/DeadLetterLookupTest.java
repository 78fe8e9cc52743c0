package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import io.pier.log.LogConfig;
import io.pier.log.PartitionLog;
import io.pier.share.DeadLetterBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding, after a restart, the letters a dead-letter queue partition already holds. */
class DeadLetterLookupTest {
    private static final TopicPartition SOURCE = new TopicPartition("orders", 0);
    private static final TopicPartition OTHER = new TopicPartition("orders", 1);

    @TempDir
    Path dir;

    private PartitionLog queue;

    @BeforeEach
    void open() throws Exception {
        queue = PartitionLog.open(dir.resolve("dlq.orders-0"), LogConfig.defaults(), new ManualClock(1_765_000_000_000L));
    }

    @AfterEach
    void close() {
        queue.close();
    }

    /** Appends one record batch of letters of {@code source} for group g, one per offset (delivery count 1). */
    private void append(TopicPartition source, long... offsets) throws Exception {
        List<SimpleRecord> letters = new ArrayList<>();
        for (long o : offsets) {
            letters.add(DeadLetterRecords.letter("g", source,
                    new DeadLetterBatch.Letter(o, (short) 1, DeadLetterBatch.Reason.REJECTED, false), null, 0));
        }
        queue.append(DeadLetterRecords.batch(letters));
        queue.flush(); // durable: up to the high watermark, which the lookup reads to
    }

    private Set<String> lookUp(String... candidates) throws Exception {
        return DeadLetterLookup.inQueue(queue, "g", SOURCE, Set.of(candidates));
    }

    @Test
    void shouldFindTheTrailingBatchesOfLoadedRecordsAcrossOtherPartitionsLetters() throws Exception {
        append(SOURCE, 1, 2);       // recorded ARCHIVED before the crashes
        append(SOURCE, 5);          // first crash: 5 still ARCHIVING
        append(OTHER, 5, 6);        // another share-partition's letters in between
        append(SOURCE, 7, 8);       // second crash: 7 and 8 still ARCHIVING

        assertThat(lookUp("5:1", "7:1", "8:1", "9:1")).containsExactlyInAnyOrder("5:1", "7:1", "8:1");
    }

    @Test
    void shouldStopAtTheFirstBatchWithALetterOfARecordNoLongerArchiving() throws Exception {
        append(SOURCE, 3);    // 3 was recorded ARCHIVED; a later death of offset 3 is a new letter
        append(SOURCE, 1, 2); // 2 was ARCHIVED since
        append(SOURCE, 4);

        assertThat(lookUp("3:1", "4:1")).as("the batch of 1 and 2 ends the search").containsExactly("4:1");
    }

    @Test
    void shouldTellDeliveryCountsApartAndFindNothingInAnEmptyQueue() throws Exception {
        assertThat(lookUp("1:1")).isEmpty();
        append(SOURCE, 1);
        assertThat(lookUp("1:2")).isEmpty();
    }

    @Test
    void shouldSearchFarBackInDoublingStretches() throws Exception {
        append(SOURCE, 0);
        for (int i = 0; i < 5_000; i++) {
            append(OTHER, i);
        }
        assertThat(lookUp("0:1")).containsExactly("0:1");
    }
}
