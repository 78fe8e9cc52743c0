package io.pier.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.pier.share.AckBatch;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The wire checks on acknowledgement batches ({@link AcknowledgementBatches}, used by ShareFetch
 * and ShareAcknowledge) against a transcription of Kafka's rules
 * ({@code KafkaApis.validateAcknowledgementBatches}): first ≤ last, no batch starting below the
 * previous one's last offset, a non-empty type list of one type or one per offset, types 0..3
 * (0..4, RENEW, from v2, and only when the request is a renew ack).
 *
 * <p>Input: a byte for the request version (1 or 2) and isRenewAck, then batches of first
 * offset, last offset (signed varlongs, so any long), a type count and the types as raw bytes.
 * Kept inputs, in {@code AcknowledgementBatchesFuzzTestInputs/wireBatches/}.
 */
class AcknowledgementBatchesFuzzTest {
    private static final int MAX_BATCHES = 16;
    private static final int MAX_TYPES = 64;

    /**
     * Invariant: Pier accepts exactly the partitions Kafka accepts; an accepted partition's engine
     * batches are the wire batches, type for type; nothing throws.
     */
    @FuzzTest(maxDuration = "60s")
    void wireBatches(byte[] input) {
        ByteBuffer in = ByteBuffer.wrap(input);
        int flags = next(in);
        short version = (short) (1 + (flags & 1));
        boolean isRenewAck = (flags & 2) != 0;
        List<AcknowledgementBatches.Wire> wire = new ArrayList<>();
        while (in.hasRemaining() && wire.size() < MAX_BATCHES) {
            long first = varlong(in);
            long last = varlong(in);
            int n = next(in) % MAX_TYPES;
            List<Byte> types = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                types.add((byte) next(in));
            }
            wire.add(new AcknowledgementBatches.Wire(first, last, types));
        }
        List<AckBatch> pier = AcknowledgementBatches.validate(wire, version, isRenewAck);
        assertThat(pier != null).as("accepted %s (v%d, renew ack %s)", wire, version, isRenewAck)
                .isEqualTo(kafkaAccepts(wire, version, isRenewAck));
        if (pier != null) {
            assertThat(pier).hasSameSizeAs(wire);
            for (int i = 0; i < wire.size(); i++) {
                AcknowledgementBatches.Wire w = wire.get(i);
                AckBatch b = pier.get(i);
                assertThat(b.firstOffset()).isEqualTo(w.firstOffset());
                assertThat(b.lastOffset()).isEqualTo(w.lastOffset());
                assertThat(b.types()).hasSameSizeAs(w.types());
                for (int t = 0; t < w.types().size(); t++) {
                    assertThat(b.types().get(t).id).isEqualTo(w.types().get(t));
                }
            }
        }
    }

    /** Kafka's checks, transcribed. */
    private static boolean kafkaAccepts(List<AcknowledgementBatches.Wire> batches, short version, boolean renewAck) {
        long prevEnd = -1;
        int maxType = version >= 2 ? 4 : 3;
        for (AcknowledgementBatches.Wire b : batches) {
            if (b.firstOffset() > b.lastOffset() || b.firstOffset() < prevEnd) {
                return false;
            }
            if (b.types() == null || b.types().isEmpty()) {
                return false;
            }
            if (b.types().size() > 1 && b.lastOffset() - b.firstOffset() != b.types().size() - 1) {
                return false;
            }
            for (byte t : b.types()) {
                if (t < 0 || t > maxType || (t == 4 && !renewAck)) {
                    return false;
                }
            }
            prevEnd = b.lastOffset();
        }
        return true;
    }

    private static long varlong(ByteBuffer in) {
        long raw = 0;
        for (int shift = 0; shift < 64 && in.hasRemaining(); shift += 7) {
            int b = in.get() & 0xff;
            raw |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                break;
            }
        }
        return (raw >>> 1) ^ -(raw & 1); // zig-zag
    }

    private static int next(ByteBuffer in) {
        return in.hasRemaining() ? in.get() & 0xff : 0;
    }
}
