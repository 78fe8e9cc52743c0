package io.pier.share;

/** ShareFetch {@code ShareAcquireMode}: how MaxRecords bounds an acquisition. */
public enum AcquireMode {
    /** Whole log batches; may exceed MaxRecords to finish a batch. */
    BATCH_OPTIMIZED((byte) 0),
    /** At most MaxRecords records. */
    RECORD_LIMIT((byte) 1);

    public final byte id;

    AcquireMode(byte id) {
        this.id = id;
    }

    public static AcquireMode forId(byte id) {
        switch (id) {
            case 0:
                return BATCH_OPTIMIZED;
            case 1:
                return RECORD_LIMIT;
            default:
                throw new IllegalArgumentException("unknown acquire mode id " + id);
        }
    }
}
