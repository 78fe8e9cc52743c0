package io.pier.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Encoding of the transaction-state log ({@code <data>/transaction-state/}), each record the key
 * and value of one record of a Kafka v2 record batch (the batch supplies offset, length and
 * CRC32C). Integers big-endian; a short string is a signed 16-bit byte length and UTF-8.
 *
 * <pre>
 * key (type 20):
 *   +------+--------+--- ... ---------+
 *   | type | idLen  | transactionalId |
 *   | i16  | i16    | id bytes        |
 *   +------+--------+--- ... ---------+
 *
 * value (a null value forgets the id):
 *   +---------+-------+------------+---------+----------+-----------+-----------+-------+---------+
 *   | version | pid   | prevPid    | nextPid | epoch    | lastEpoch | timeoutMs | state | txnVer  |
 *   | i16 = 0 | i64   | i64        | i64     | i16      | i16       | i32       | i8    | i16     |
 *   +---------+-------+------------+---------+----------+-----------+-----------+-------+---------+
 *   | startTimestampMs | lastUpdateTimestampMs | nParts | nParts x (topic str, i32)  |
 *   | i64              | i64                   | i32    |                            |
 *   +------------------+-----------------------+--------+----------------------------+
 *   | nGroups | nGroups x group str |
 *   | i32     |                     |
 *   +---------+---------------------+
 * </pre>
 */
public final class TransactionRecords {
    public static final short TRANSACTION = 20;
    static final short VALUE_VERSION = 0;

    private TransactionRecords() {}

    public static byte[] key(String transactionalId) {
        byte[] id = transactionalId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + 2 + id.length);
        b.putShort(TRANSACTION);
        ShortStrings.put(b, id, "transactional id");
        return b.array();
    }

    public static byte[] value(TransactionRecord r) {
        int size = 2 + 8 + 8 + 8 + 2 + 2 + 4 + 1 + 2 + 8 + 8 + 4 + 4;
        for (TopicPartition tp : r.partitions()) {
            size += 2 + utf8(tp.topic()).length + 4;
        }
        for (String g : r.groupIds()) {
            size += 2 + utf8(g).length;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putShort(VALUE_VERSION);
        b.putLong(r.producerId());
        b.putLong(r.prevProducerId());
        b.putLong(r.nextProducerId());
        b.putShort(r.producerEpoch());
        b.putShort(r.lastProducerEpoch());
        b.putInt(r.timeoutMs());
        b.put(r.state());
        b.putShort(r.transactionVersion());
        b.putLong(r.startTimestampMs());
        b.putLong(r.lastUpdateTimestampMs());
        b.putInt(r.partitions().size());
        for (TopicPartition tp : r.partitions()) {
            ShortStrings.put(b, utf8(tp.topic()), "topic name");
            b.putInt(tp.partition());
        }
        b.putInt(r.groupIds().size());
        for (String g : r.groupIds()) {
            ShortStrings.put(b, utf8(g), "group id");
        }
        return b.array();
    }

    /** @throws IllegalArgumentException if the bytes are not a transaction key */
    public static String decodeKey(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short type = b.getShort();
        if (type != TRANSACTION) {
            throw new IllegalArgumentException("unknown transaction-state record type " + type);
        }
        String id = ShortStrings.get(b);
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in key");
        }
        return id;
    }

    /** @throws IllegalArgumentException if the bytes are not a value of a known version */
    public static TransactionRecord decodeValue(String transactionalId, ByteBuffer buf) {
        ByteBuffer b = buf.duplicate();
        short version = b.getShort();
        if (version != VALUE_VERSION) {
            throw new IllegalArgumentException("unknown transaction-state value version " + version);
        }
        long pid = b.getLong();
        long prevPid = b.getLong();
        long nextPid = b.getLong();
        short epoch = b.getShort();
        short lastEpoch = b.getShort();
        int timeoutMs = b.getInt();
        byte state = b.get();
        short txnVersion = b.getShort();
        long start = b.getLong();
        long lastUpdate = b.getLong();
        int nParts = count(b);
        Set<TopicPartition> parts = new HashSet<>();
        for (int i = 0; i < nParts; i++) {
            parts.add(new TopicPartition(ShortStrings.get(b), b.getInt()));
        }
        int nGroups = count(b);
        Set<String> groups = new HashSet<>();
        for (int i = 0; i < nGroups; i++) {
            groups.add(ShortStrings.get(b));
        }
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in value");
        }
        return new TransactionRecord(transactionalId, pid, prevPid, nextPid, epoch, lastEpoch, timeoutMs, state, parts,
                groups, start, lastUpdate, txnVersion);
    }

    private static int count(ByteBuffer b) {
        int n = b.getInt();
        // Each element takes at least 2 bytes: a count past that is damage, not a huge set.
        if (n < 0 || n > b.remaining() / 2) {
            throw new IllegalArgumentException("bad element count " + n);
        }
        return n;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
