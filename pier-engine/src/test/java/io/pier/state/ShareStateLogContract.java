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
import org.junit.jupiter.api.Test;

/**
 * What every {@link ShareStateLog} backend must do, whatever it stores the records on: consecutive
 * offsets, replay of what was flushed after a reopen, a durable start move, a torn tail dropped, a
 * flipped byte refused. A backend's test extends this class and says how to open it over its
 * storage and how to damage that storage.
 */
abstract class ShareStateLogContract {
    private static final Uuid TOPIC = new Uuid(11L, 12L);

    private ShareStateLog log;

    /** Opens the backend over this test's storage: the same storage on every call. */
    protected abstract ShareStateLog openBackend() throws IOException;

    /** With the backend closed: leaves a write cut short after the last flushed record. */
    protected abstract void tearTail() throws IOException;

    /** With the backend closed: flips one byte inside the flushed records. */
    protected abstract void flipFlushedByte() throws IOException;

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

        // When it is reopened
        reopen();

        // Then replay visits every record, in order, and appends carry on after them
        List<ShareStateLog.Entry> all = new ArrayList<>(first);
        all.addAll(second);
        assertReplayed(replayAll(), 0, all);
        assertThat(log.startOffset()).isZero();
        assertThat(log.endOffset()).isEqualTo(5);
        assertThat(log.append(List.of(update(4, 0)))).isEqualTo(5);
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
        log.flush();
        reopen();

        // Then every record is there at its own offset
        assertReplayed(replayAll(), 0, big);
        assertThat(log.endOffset()).isEqualTo(1_200);
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
        long start = n - 20;

        // When the start moves, and then a move below it is asked for
        log.moveStart(start);
        log.moveStart(start - 5);

        // Then the start stays where it moved to, across a reopen, and replay begins there
        assertThat(log.startOffset()).isEqualTo(start);
        reopen();
        assertThat(log.startOffset()).isEqualTo(start);
        assertReplayed(replayAll(), start, entries.subList((int) start, n));
        assertThat(log.endOffset()).isEqualTo(n);
    }

    @Test
    void shouldRefuseToMoveTheStartBeyondTheDurableEnd() throws IOException {
        reopen();
        log.append(updates(0, 3));
        log.flush();
        assertThatThrownBy(() -> log.moveStart(4)).isInstanceOf(IllegalArgumentException.class);
        assertThat(log.startOffset()).isZero();
    }

    @Test
    void shouldDropATornTailAndAppendAfterTheLastFlushedRecord() throws IOException {
        // Given five flushed records and then a write cut short
        reopen();
        List<ShareStateLog.Entry> flushed = updates(0, 5);
        log.append(flushed);
        log.flush();
        closeBackend();
        tearTail();

        // When it is reopened
        reopen();

        // Then the flushed records are all there and nothing of the torn one
        assertReplayed(replayAll(), 0, flushed);
        assertThat(log.endOffset()).isEqualTo(5);
        assertThat(log.append(List.of(update(1, 100)))).isEqualTo(5);
        log.flush();
        reopen();
        assertThat(replayAll()).hasSize(6);
    }

    @Test
    void shouldRefuseToOpenWhenAFlushedByteFlipped() throws IOException {
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
