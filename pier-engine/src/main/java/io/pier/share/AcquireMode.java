package io.pier.share;

/** ShareFetch {@code ShareAcquireMode}: how MaxRecords bounds an acquisition. */
public enum AcquireMode {
    /** Whole log batches; may exceed MaxRecords to finish a batch. */
    BATCH_OPTIMIZED((byte) 0),
    /** At most MaxRecords records. */
    RECORD_LIMIT((byte) 1);

    /** Each mode once: {@code values()} copies its array on every call, and a fetch asks per partition. */
    private static final AcquireMode[] ALL = values();

    public final byte id;

    AcquireMode(byte id) {
        this.id = id;
    }

    /** Whether {@code id} names a mode: a request with any other id is malformed. */
    public static boolean isKnown(byte id) {
        for (AcquireMode mode : ALL) {
            if (mode.id == id) {
                return true;
            }
        }
        return false;
    }

    public static AcquireMode forId(byte id) {
        for (AcquireMode mode : ALL) {
            if (mode.id == id) {
                return mode;
            }
        }
        throw new IllegalArgumentException("unknown acquire mode id " + id);
    }
}
