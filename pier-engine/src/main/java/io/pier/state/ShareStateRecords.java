package io.pier.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.Uuid;

/**
 * Encoding of the records of the share-state log, each stored as the key and value of one record
 * in a Kafka v2 record batch (the batch supplies offset, length and CRC32C). All integers are
 * big-endian; strings are a signed 16-bit byte length followed by UTF-8.
 *
 * <pre>
 * key, ShareSnapshot (type 0) and ShareUpdate (type 1):
 *   0      2        4              4+g      20+g         24+g
 *   +------+--------+--- ... ------+--------+------------+
 *   | type | gLen   | groupId      | topicId| partition  |
 *   | i16  | i16    | g bytes      | 16 B   | i32        |
 *   +------+--------+--- ... ------+--------+------------+
 *
 * key, Group (type 2):
 *   +------+--------+--- ... ------+
 *   | type | gLen   | groupId      |
 *   +------+--------+--- ... ------+
 *
 * value, ShareSnapshot and ShareUpdate (a null value under a type-0 key deletes the share-partition):
 *   0         2            6             14           18
 *   +---------+------------+-------------+------------+----------- ... -----------+
 *   | version | stateEpoch | startOffset | batchCount | batchCount x state batch  |
 *   | i16 0/1 | i32        | i64         | i32        | 19 B each (27 B in v1)    |
 *   +---------+------------+-------------+------------+----------- ... -----------+
 *
 *   state batch:
 *   0             8            16      17              19
 *   +-------------+------------+-------+---------------+
 *   | firstOffset | lastOffset | state | deliveryCount |
 *   | i64         | i64        | i8    | i16           |
 *   +-------------+------------+-------+---------------+
 *   state: 0 AVAILABLE, 2 ACKNOWLEDGED, 3 ARCHIVING, 4 ARCHIVED (an acquisition is stored as AVAILABLE with
 *   its new delivery count)
 *   version 1 (written only when a batch has a backoff): each state batch is followed by
 *   notBefore, i64, the wall-clock ms before which the AVAILABLE records are not acquired (0: none)
 *
 * value, Group: | version i16 = 0 |  (the group exists); a null value: the group was deleted.
 * </pre>
 *
 * <p>A snapshot holds the whole state of its share-partition and replaces what came before; an
 * update holds only the changed ranges and is merged with {@link StateBatchCombiner}.
 */
public final class ShareStateRecords {
    public static final short SNAPSHOT = 0;
    public static final short UPDATE = 1;
    public static final short GROUP = 2;
    static final short VALUE_VERSION = 0;
    static final int BATCH_BYTES = 19;
    /** A state value whose batches carry a not-before time (wall clock) each. */
    static final short VALUE_VERSION_BACKOFF = 1;
    static final int BATCH_BYTES_V1 = 27;

    private ShareStateRecords() {}

    /** A decoded key: its type and either a share-partition key or a group id. */
    public record Key(short type, SharePartitionKey partitionKey, String groupId) {}

    public static byte[] shareKey(short type, SharePartitionKey key) {
        byte[] group = key.groupId().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + group.length + 16 + 4);
        b.putShort(type);
        ShortStrings.put(b, group, "group id");
        b.putLong(key.topicId().getMostSignificantBits());
        b.putLong(key.topicId().getLeastSignificantBits());
        b.putInt(key.partition());
        return b.array();
    }

    public static byte[] groupKey(String groupId) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + group.length);
        b.putShort(GROUP);
        ShortStrings.put(b, group, "group id");
        return b.array();
    }

    public static byte[] groupValue() {
        return ByteBuffer.allocate(2).putShort(VALUE_VERSION).array();
    }

    /**
     * A state value: version 0, or version 1 (each batch followed by its not-before time, 0 for
     * none) when a batch has a backoff, so a state without one is written as before.
     */
    public static byte[] stateValue(int stateEpoch, long startOffset, List<PersistedBatch> batches) {
        boolean backoff = batches.stream().anyMatch(PersistedBatch::hasBackoff);
        int batchBytes = backoff ? BATCH_BYTES_V1 : BATCH_BYTES;
        ByteBuffer b = ByteBuffer.allocate(2 + 4 + 8 + 4 + batchBytes * batches.size());
        b.putShort(backoff ? VALUE_VERSION_BACKOFF : VALUE_VERSION);
        b.putInt(stateEpoch);
        b.putLong(startOffset);
        b.putInt(batches.size());
        for (PersistedBatch pb : batches) {
            b.putLong(pb.firstOffset());
            b.putLong(pb.lastOffset());
            b.put(pb.state());
            b.putShort(pb.deliveryCount());
            if (backoff) {
                b.putLong(pb.hasBackoff() ? pb.notBeforeMs() : 0);
            }
        }
        return b.array();
    }

    /** @throws IllegalArgumentException if the bytes are not a key of a known type */
    public static Key decodeKey(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short type = b.getShort();
        String group = ShortStrings.get(b);
        switch (type) {
            case SNAPSHOT, UPDATE -> {
                Uuid topicId = new Uuid(b.getLong(), b.getLong());
                int partition = b.getInt();
                requireConsumed(b);
                return new Key(type, new SharePartitionKey(group, topicId, partition), null);
            }
            case GROUP -> {
                requireConsumed(b);
                return new Key(type, null, group);
            }
            default -> throw new IllegalArgumentException("unknown share-state record type " + type);
        }
    }

    /** @throws IllegalArgumentException if the bytes are not a state value of a known version */
    public static ShareState decodeState(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short version = b.getShort();
        if (version != VALUE_VERSION && version != VALUE_VERSION_BACKOFF) {
            throw new IllegalArgumentException("unknown share-state value version " + version);
        }
        boolean backoff = version == VALUE_VERSION_BACKOFF;
        int batchBytes = backoff ? BATCH_BYTES_V1 : BATCH_BYTES;
        int epoch = b.getInt();
        long start = b.getLong();
        int n = b.getInt();
        if (n < 0 || (long) n * batchBytes != b.remaining()) {
            throw new IllegalArgumentException("bad batch count " + n + " for " + b.remaining() + " bytes");
        }
        List<PersistedBatch> batches = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long first = b.getLong();
            long last = b.getLong();
            byte state = b.get();
            short count = b.getShort();
            long notBefore = backoff ? b.getLong() : 0;
            batches.add(new PersistedBatch(first, last, state, count,
                    notBefore == 0 ? PersistedBatch.NO_BACKOFF : notBefore));
        }
        return new ShareState(epoch, start, batches);
    }



    private static void requireConsumed(ByteBuffer b) {
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in key");
        }
    }
}
