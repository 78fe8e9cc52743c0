package io.pier.share;

import java.util.List;

/**
 * One acknowledgement batch: either one type for the whole range or one type per offset, as the
 * client encodes it. Shape errors are reported by {@link SharePartition#acknowledge} as
 * INVALID_REQUEST rather than thrown here, because they come from the wire.
 */
public record AckBatch(long firstOffset, long lastOffset, List<AcknowledgeType> types) {
    public AckBatch {
        types = types == null ? List.of() : List.copyOf(types);
    }

    public static AckBatch of(long firstOffset, long lastOffset, AcknowledgeType type) {
        return new AckBatch(firstOffset, lastOffset, List.of(type));
    }

    /** Whether the types list has a legal shape for the range. */
    boolean wellFormed() {
        if (firstOffset < 0 || lastOffset < firstOffset || types.isEmpty()) {
            return false;
        }
        return types.size() == 1 || types.size() == lastOffset - firstOffset + 1;
    }

    AcknowledgeType typeAt(long offset) {
        return types.size() == 1 ? types.get(0) : types.get((int) (offset - firstOffset));
    }
}
