package io.pier.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * Encoding of the committed-offsets log ({@code <data>/consumer-offsets/}), each record the key and
 * value of one record in a Kafka v2 record batch (the batch supplies offset, length and CRC32C).
 * All integers are big-endian; a short string is a signed 16-bit byte length and UTF-8, a long
 * string a signed 32-bit byte length (-1 for null) and UTF-8.
 *
 * <pre>
 * key, Offset (type 10):
 *   +------+--------+--- ... ---+--------+--- ... ---+-----------+
 *   | type | gLen   | groupId   | tLen   | topic     | partition |
 *   | i16  | i16    | g bytes   | i16    | t bytes   | i32       |
 *   +------+--------+--- ... ---+--------+--- ... ---+-----------+
 *
 * key, PendingOffset (type 11): an offset committed inside a transaction (TxnOffsetCommit), not
 * visible until the transaction's commit marker turns it into an Offset record (the same value):
 *   +------+--------+--- ... ---+------------+--------+--- ... ---+-----------+
 *   | type | gLen   | groupId   | producerId | tLen   | topic     | partition |
 *   | i16  | i16    | g bytes   | i64        | i16    | t bytes   | i32       |
 *   +------+--------+--- ... ---+------------+--------+--- ... ---+-----------+
 *
 * value of either (a null value deletes the key's offset):
 *   0         2         18       26            30                 38        42
 *   +---------+---------+--------+-------------+-----------------+---------+--- ... ---+
 *   | version | topicId | offset | leaderEpoch | commitTimestamp | mLen    | metadata  |
 *   | i16 = 0 | 16 B    | i64    | i32         | i64 (wall ms)   | i32     | m bytes   |
 *   +---------+---------+--------+-------------+-----------------+---------+--- ... ---+
 * </pre>
 *
 * <p>Every value is the whole state of its key, so the latest record of a key replaces what came
 * before and compaction only has to keep each key's latest record.
 */
public final class OffsetRecords {
    public static final short OFFSET = 10;
    public static final short PENDING_OFFSET = 11;
    static final short VALUE_VERSION = 0;

    private OffsetRecords() {}

    /** A decoded key. */
    public record Key(String groupId, TopicPartition partition) {}

    /** A decoded pending-offset key. */
    public record PendingKey(String groupId, long producerId, TopicPartition partition) {}

    /** The record type of a key: {@link #OFFSET} or {@link #PENDING_OFFSET}. */
    public static short keyType(ByteBuffer buf) {
        return buf.duplicate().getShort();
    }

    public static byte[] pendingKey(String groupId, long producerId, TopicPartition tp) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        byte[] topic = tp.topic().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + group.length + 8 + 2 + topic.length + 4);
        b.putShort(PENDING_OFFSET);
        ShortStrings.put(b, group, "group id");
        b.putLong(producerId);
        ShortStrings.put(b, topic, "topic name");
        b.putInt(tp.partition());
        return b.array();
    }

    /** @throws IllegalArgumentException if the bytes are not a pending-offset key */
    public static PendingKey decodePendingKey(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short type = b.getShort();
        if (type != PENDING_OFFSET) {
            throw new IllegalArgumentException("not a pending-offset record: type " + type);
        }
        String group = ShortStrings.get(b);
        long producerId = b.getLong();
        String topic = ShortStrings.get(b);
        int partition = b.getInt();
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in key");
        }
        return new PendingKey(group, producerId, new TopicPartition(topic, partition));
    }

    public static byte[] key(String groupId, TopicPartition tp) {
        byte[] group = groupId.getBytes(StandardCharsets.UTF_8);
        byte[] topic = tp.topic().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + group.length + 2 + topic.length + 4);
        b.putShort(OFFSET);
        ShortStrings.put(b, group, "group id");
        ShortStrings.put(b, topic, "topic name");
        b.putInt(tp.partition());
        return b.array();
    }

    public static byte[] value(CommittedOffset o) {
        byte[] metadata = o.metadata() == null ? null : o.metadata().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 16 + 8 + 4 + 8 + 4 + (metadata == null ? 0 : metadata.length));
        b.putShort(VALUE_VERSION);
        b.putLong(o.topicId().getMostSignificantBits());
        b.putLong(o.topicId().getLeastSignificantBits());
        b.putLong(o.offset());
        b.putInt(o.leaderEpoch());
        b.putLong(o.commitTimestampMs());
        if (metadata == null) {
            b.putInt(-1);
        } else {
            b.putInt(metadata.length);
            b.put(metadata);
        }
        return b.array();
    }

    /** @throws IllegalArgumentException if the bytes are not an offset key */
    public static Key decodeKey(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short type = b.getShort();
        if (type != OFFSET) {
            throw new IllegalArgumentException("unknown committed-offset record type " + type);
        }
        String group = ShortStrings.get(b);
        String topic = ShortStrings.get(b);
        int partition = b.getInt();
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in key");
        }
        return new Key(group, new TopicPartition(topic, partition));
    }

    /** @throws IllegalArgumentException if the bytes are not a value of a known version */
    public static CommittedOffset decodeValue(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short version = b.getShort();
        if (version != VALUE_VERSION) {
            throw new IllegalArgumentException("unknown committed-offset value version " + version);
        }
        Uuid topicId = new Uuid(b.getLong(), b.getLong());
        long offset = b.getLong();
        int leaderEpoch = b.getInt();
        long timestamp = b.getLong();
        int len = b.getInt();
        String metadata = null;
        if (len >= 0) {
            if (len != b.remaining()) {
                throw new IllegalArgumentException("bad metadata length " + len + " for " + b.remaining() + " bytes");
            }
            byte[] bytes = new byte[len];
            b.get(bytes);
            metadata = new String(bytes, StandardCharsets.UTF_8);
        } else if (len != -1 || b.hasRemaining()) {
            throw new IllegalArgumentException("bad metadata length " + len);
        }
        return new CommittedOffset(topicId, offset, leaderEpoch, metadata, timestamp);
    }


}
