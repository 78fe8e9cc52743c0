package io.pier.log;

import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.CorruptRecordException;

/**
 * Checks the lengths in a snappy payload before snappy-java reads it. Its stream allocates each
 * chunk at the size the chunk's header announces (up to 512 MiB) and each block at the size the
 * block announces, before reading a byte of either (CVE-2023-34455 is this family), and an
 * oversized chunk fails with an {@code Error}, not an exception. Every length must therefore fit
 * the bytes present, and no block may claim to inflate past what snappy can encode in its size.
 *
 * <pre>
 * xerial framing (Kafka's Java producer):           raw snappy (librdkafka and others):
 *   magic 82 'SNAPPY' 00 | version int32 | compat int32   varint uncompressed length | block
 *   then chunks: length int32 | snappy block, where each block starts with its varint
 *   uncompressed length; a new header may start again where a chunk would.
 * </pre>
 */
final class SnappyFrames {
    private static final byte[] MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int HEADER_BYTES = 16;
    /**
     * A snappy copy element writes at most 64 bytes from 3 (a 2-byte offset) or 5: no block
     * inflates past about 21 times its size, so a claim beyond 32 times is a lie.
     */
    private static final long MAX_RATIO = 32;

    private SnappyFrames() {}

    /** {@code payload}: the batch's records section, position to limit. */
    static void check(ByteBuffer payload) {
        int pos = payload.position();
        int end = payload.limit();
        if (!magicAt(payload, pos)) {
            checkBlock(payload, pos, end - pos);
            return;
        }
        while (pos < end) {
            if (magicAt(payload, pos)) {
                pos += HEADER_BYTES;
                continue;
            }
            if (end - pos < 4) {
                throw new CorruptRecordException("snappy chunk length cut short");
            }
            int chunk = payload.getInt(pos);
            pos += 4;
            if (chunk < 0 || chunk > end - pos) {
                throw new CorruptRecordException("snappy chunk of " + chunk + " bytes where " + (end - pos) + " remain");
            }
            checkBlock(payload, pos, chunk);
            pos += chunk;
        }
    }

    private static boolean magicAt(ByteBuffer b, int pos) {
        if (b.limit() - pos < HEADER_BYTES) {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b.get(pos + i) != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /** The block's leading varint (its inflated size) must be plausible for {@code size} bytes. */
    private static void checkBlock(ByteBuffer b, int pos, int size) {
        long inflated = 0;
        for (int i = 0; i < 5 && i < size; i++) {
            int v = b.get(pos + i);
            inflated |= (long) (v & 0x7f) << (7 * i);
            if ((v & 0x80) == 0) {
                break;
            }
        }
        if (inflated > MAX_RATIO * size + 64) {
            throw new CorruptRecordException("snappy block of " + size + " bytes claims to inflate to " + inflated);
        }
    }
}
