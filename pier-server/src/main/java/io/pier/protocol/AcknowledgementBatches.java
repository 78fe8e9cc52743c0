package io.pier.protocol;

import io.pier.share.AckBatch;
import io.pier.share.AcknowledgeType;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns wire acknowledgement batches into engine batches, applying Kafka's request checks
 * (KafkaApis.validateAcknowledgementBatches): any violation makes the whole partition
 * INVALID_REQUEST, signalled here by returning null.
 */
final class AcknowledgementBatches {
    private AcknowledgementBatches() {}

    /** One wire batch, whichever request it came in. */
    record Wire(long firstOffset, long lastOffset, List<Byte> types) {}

    static List<AckBatch> validate(List<Wire> batches, short version, boolean isRenewAck) {
        byte maxType = version >= 2 ? AcknowledgeType.RENEW.id : AcknowledgeType.REJECT.id;
        List<AckBatch> out = new ArrayList<>(batches.size());
        long previousLast = -1;
        for (Wire b : batches) {
            if (b.firstOffset() > b.lastOffset() || b.firstOffset() < previousLast) {
                return null;
            }
            List<Byte> types = b.types();
            if (types == null || types.isEmpty()) {
                return null;
            }
            if (types.size() > 1 && types.size() != b.lastOffset() - b.firstOffset() + 1) {
                return null;
            }
            List<AcknowledgeType> parsed = new ArrayList<>(types.size());
            for (byte t : types) {
                if (t < 0 || t > maxType) {
                    return null;
                }
                if (t == AcknowledgeType.RENEW.id && !isRenewAck) {
                    return null;
                }
                parsed.add(AcknowledgeType.forId(t));
            }
            out.add(new AckBatch(b.firstOffset(), b.lastOffset(), parsed));
            previousLast = b.lastOffset();
        }
        return out;
    }
}
