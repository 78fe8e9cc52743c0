package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What every {@link ShareStateLog} backend must do, whatever it stores the records on: consecutive
 * offsets within what one flush covers, increasing ones across flushes, replay of what was flushed
 * after a reopen at exactly the offsets append returned, a durable start move, a torn tail dropped,
 * a flipped byte refused. A backend's test extends this class and says how to open it over its
 * storage and how to damage that storage; a backend whose storage guards its own bytes (an
 * upstream Kafka topic) says it cannot be damaged, and the damage tests are skipped.
 *
 * <p>Offsets need not be dense across flushes (an upstream's transaction marker takes one), so the
 * tests expect the end after a flush to be what a reopen reports, not a count of records.
 */
abstract class ShareStateLogContract {
    private static final Uuid TOPIC = new Uuid(11L, 12L);

    private ShareStateLog log;

    /** Opens the backend over this test's storage: the same storage on every call. */
    protected abstract ShareStateLog openBackend() throws IOException;

    /** Whether this test can damage the backend's storage ({@link #tearTail}, {@link #flipFlushedByte}). */
    protected boolean supportsDamage() {
        return true;
    }

    /** With the backend closed: leaves a write cut short after the last flushed record. */
    protected abstract void tearTail() throws IOException;

    /** With the backend closed: flips one byte inside the flushed records. */
    protected abstract void flipFlushedByte() throws IOException;

    /**
     * Offsets a close takes after a flush of records, which a reopen's end counts: an upstream
     * Kafka topic's commit marker for the transaction the flush left open.
     */
    protected int offsetsTakenByClose() {
        return 0;
    }

    /** Enough records of about 100 bytes that the backend stores them in more than one unit. */
    protected int recordsSpanningStorage() {
        return 400;
    }

    @AfterEach
    void closeBackend() {
        if (log != null) {
            log.close();
            log = null;
        }
    }

    private ShareStateLog reopen() throws IOException {
        closeBackend();
        log = openBackend();
        return log;
    }

    /** A stored record as replay reports it, with the bytes copied out. */
    private record Stored(long offset, byte[] key, byte[] value) {
        boolean sameAs(long expectedOffset, ShareStateLog.Entry e) {
            return offset == expectedOffset && Arrays.equals(key, e.key()) && Arrays.equals(value, e.value());
        }
    }

    private List<Stored> replayAll() throws IOException {
        List<Stored> out = new ArrayList<>();
        log.replay((offset, key, value) ->
                out.add(new Stored(offset, bytes(key), value == null ? null : bytes(value))));
        return out;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static ShareStateLog.Entry update(int partition, long startOffset) {
        SharePartitionKey key = new SharePartitionKey("contract", TOPIC, partition);
        return new ShareStateLog.Entry(ShareStateRecords.shareKey(ShareStateRecords.UPDATE, key),
                ShareStateRecords.stateValue(0, startOffset, List.of(
                        new PersistedBatch(startOffset, startOffset + 3, PersistedBatch.ACKNOWLEDGED, (short) 1),
                        new PersistedBatch(startOffset + 4, startOffset + 9, PersistedBatch.AVAILABLE, (short) 2))));
    }

    private static ShareStateLog.Entry tombstone(int partition) {
        SharePartitionKey key = new SharePartitionKey("contract", TOPIC, partition);
        return new ShareStateLog.Entry(ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key), null);
    }

    private static List<ShareStateLog.Entry> updates(int from, int count) {
        List<ShareStateLog.Entry> entries = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            entries.add(update(i % 7, i));
        }
        return entries;
    }

    private static void assertReplayed(List<Stored> stored, long firstOffset, List<ShareStateLog.Entry> expected) {
        assertThat(stored).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(stored.get(i).sameAs(firstOffset + i, expected.get(i)))
                    .as("record %d at offset %d", i, firstOffset + i).isTrue();
        }
    }

    @Test
    void shouldStartEmpty() throws IOException {
        reopen();
        assertThat(log.startOffset()).isZero();
        assertThat(log.endOffset()).isZero();
        assertThat(replayAll()).isEmpty();
    }

    @Test
    void shouldReplayFlushedRecordsAtConsecutiveOffsetsAfterReopen() throws IOException {
        // Given two appends, one of them with a tombstone, and a flush
        reopen();
        List<ShareStateLog.Entry> first = List.of(update(0, 0), tombstone(1), update(2, 5));
        List<ShareStateLog.Entry> second = List.of(update(0, 10), update(3, 0));
        assertThat(log.append(first)).isZero();
        assertThat(log.append(second)).isEqualTo(3);
        assertThat(log.endOffset()).isEqualTo(5);
        log.flush();
        long end = log.endOffset();
        assertThat(end).isGreaterThanOrEqualTo(5);

        // When it is reopened
        reopen();

        // Then replay visits every record, in order, and appends carry on after them
        List<ShareStateLog.Entry> all = new ArrayList<>(first);
        all.addAll(second);
        assertReplayed(replayAll(), 0, all);
        assertThat(log.startOffset()).isZero();
        assertThat(log.endOffset()).isEqualTo(end + offsetsTakenByClose());
        assertThat(log.append(List.of(update(4, 0)))).isEqualTo(end + offsetsTakenByClose());
    }

    @Test
    void shouldReplayEachRecordAtTheOffsetItsAppendReturnedAcrossFlushes() throws IOException {
        // Given three appends, each flushed on its own, and a fourth that is never flushed
        reopen();
        List<List<ShareStateLog.Entry>> appends = List.of(updates(0, 3), List.of(tombstone(2)), updates(3, 2));
        List<Long> firsts = new ArrayList<>();
        long previousEnd = log.endOffset();
        for (List<ShareStateLog.Entry> entries : appends) {
            long expectedFirst = log.endOffset();
            long first = log.append(entries);
            assertThat(first).isEqualTo(expectedFirst).isGreaterThanOrEqualTo(previousEnd);
            assertThat(log.endOffset()).isEqualTo(first + entries.size());
            log.flush();
            assertThat(log.endOffset()).isGreaterThanOrEqualTo(first + entries.size());
            previousEnd = log.endOffset();
            firsts.add(first);
        }
        long end = log.endOffset();

        // When it is reopened
        reopen();

        // Then replay reports exactly the offsets the appends returned, and the end is the flushed one
        List<Stored> stored = replayAll();
        int at = 0;
        for (int a = 0; a < appends.size(); a++) {
            List<ShareStateLog.Entry> entries = appends.get(a);
            assertReplayed(stored.subList(at, Math.min(stored.size(), at + entries.size())), firsts.get(a), entries);
            at += entries.size();
        }
        assertThat(stored).hasSize(at);
        assertThat(log.endOffset()).isEqualTo(end + offsetsTakenByClose());
    }

    @Test
    void shouldKeepOffsetsConsecutiveForAnAppendLargerThanOneBatch() throws IOException {
        // Given one append of about 1.2 MB
        reopen();
        List<ShareStateLog.Entry> big = new ArrayList<>();
        SharePartitionKey key = new SharePartitionKey("big", TOPIC, 0);
        byte[] value = new byte[1_000];
        for (int i = 0; i < 1_200; i++) {
            big.add(new ShareStateLog.Entry(ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key), value));
        }

        // When it is flushed and replayed after a reopen
        assertThat(log.append(big)).isZero();
        assertThat(log.endOffset()).isEqualTo(1_200);
        log.flush();
        long end = log.endOffset();
        reopen();

        // Then every record is there at its own offset
        assertReplayed(replayAll(), 0, big);
        assertThat(log.endOffset()).isEqualTo(end + offsetsTakenByClose());
    }

    @Test
    void shouldMoveTheStartDurablyAndReplayOnlyFromIt() throws IOException {
        // Given flushed records spread over the backend's storage
        reopen();
        int n = recordsSpanningStorage();
        List<ShareStateLog.Entry> entries = updates(0, n);
        for (int i = 0; i < n; i += 50) {
            log.append(entries.subList(i, Math.min(n, i + 50)));
        }
        log.flush();
        long end = log.endOffset();
        long start = n - 20;

        // When the start moves, and then a move below it is asked for
        log.moveStart(start);
        log.moveStart(start - 5);

        // Then the start stays where it moved to, across a reopen, and replay begins there
        assertThat(log.startOffset()).isEqualTo(start);
        reopen();
        assertThat(log.startOffset()).isEqualTo(start);
        assertReplayed(replayAll(), start, entries.subList((int) start, n));
        assertThat(log.endOffset()).isEqualTo(end + offsetsTakenByClose());
    }

    @Test
    void shouldKeepWhatWasAppendedBeforeAClose() throws IOException {
        // Given records flushed, then more appended and not flushed
        reopen();
        List<ShareStateLog.Entry> flushed = updates(0, 2);
        List<ShareStateLog.Entry> appended = updates(2, 3);
        log.append(flushed);
        log.flush();
        long first = log.append(appended);

        // When the log is closed and reopened
        reopen();

        // Then the close made the appended records durable too
        List<Stored> stored = replayAll();
        assertThat(stored).hasSize(5);
        assertReplayed(stored.subList(0, 2), 0, flushed);
        assertReplayed(stored.subList(2, 5), first, appended);
        assertThat(log.endOffset()).isGreaterThanOrEqualTo(first + 3);
    }

    @Test
    void shouldReplayNothingOnceTheStartMovedToTheEndOfAFlush() throws IOException {
        // Given flushed records, and the start moved to the end at once
        reopen();
        log.append(updates(0, 4));
        log.flush();
        long end = log.endOffset();
        log.moveStart(end);
        assertThat(log.startOffset()).isEqualTo(end);

        // When it is reopened
        reopen();

        // Then nothing is left to replay, and appends carry on at the end
        assertThat(log.startOffset()).isEqualTo(end);
        assertThat(replayAll()).isEmpty();
        assertThat(log.endOffset()).isEqualTo(end + offsetsTakenByClose());
        assertThat(log.append(updates(4, 1))).isEqualTo(end + offsetsTakenByClose());
    }

    @Test
    void shouldRefuseToMoveTheStartBeyondTheDurableEnd() throws IOException {
        // Given three flushed records, then two appended and not flushed
        reopen();
        log.append(updates(0, 3));
        log.flush();
        long durableEnd = log.endOffset();
        assertThat(log.append(updates(3, 2))).isEqualTo(durableEnd);

        // Then the start may not pass the flushed end, into what is not durable yet
        assertThatThrownBy(() -> log.moveStart(durableEnd + 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(log.startOffset()).isZero();
    }

    @Test
    void shouldDropATornTailAndAppendAfterTheLastFlushedRecord() throws IOException {
        Assumptions.assumeTrue(supportsDamage(), "the backend's storage cannot be damaged from here");
        // Given five flushed records and then a write cut short
        reopen();
        List<ShareStateLog.Entry> flushed = updates(0, 5);
        log.append(flushed);
        log.flush();
        long end = log.endOffset();
        closeBackend();
        tearTail();

        // When it is reopened
        reopen();

        // Then the flushed records are all there and nothing of the torn one
        assertReplayed(replayAll(), 0, flushed);
        assertThat(log.endOffset()).isEqualTo(end);
        assertThat(log.append(List.of(update(1, 100)))).isEqualTo(end);
        log.flush();
        reopen();
        assertThat(replayAll()).hasSize(6);
    }

    @Test
    void shouldRefuseToOpenWhenAFlushedByteFlipped() throws IOException {
        Assumptions.assumeTrue(supportsDamage(), "the backend's storage cannot be damaged from here");
        // Given flushed records with one byte flipped inside them
        reopen();
        log.append(updates(0, 5));
        log.flush();
        closeBackend();
        flipFlushedByte();

        // Then opening fails rather than serving wrong state
        assertThatThrownBy(this::openBackend).isInstanceOf(IOException.class);
    }
}
