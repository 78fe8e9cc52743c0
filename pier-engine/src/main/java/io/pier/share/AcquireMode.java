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
        return withId(id) != null;
    }

    public static AcquireMode forId(byte id) {
        AcquireMode mode = withId(id);
        if (mode == null) {
            throw new IllegalArgumentException("unknown acquire mode id " + id);
        }
        return mode;
    }

    /** The mode {@code id} names, or null. */
    private static AcquireMode withId(byte id) {
        for (AcquireMode mode : ALL) {
            if (mode.id == id) {
                return mode;
            }
        }
        return null;
    }
}
