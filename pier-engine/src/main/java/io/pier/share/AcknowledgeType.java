package io.pier.share;

/**
 * How a consumer settles a delivered record, with the wire ids of ShareFetch / ShareAcknowledge.
 * GAP (0) marks an offset with no record (a compacted hole or a transaction marker); RENEW (4)
 * re-arms the acquisition lock and changes no state.
 */
public enum AcknowledgeType {
    GAP((byte) 0),
    ACCEPT((byte) 1),
    RELEASE((byte) 2),
    REJECT((byte) 3),
    RENEW((byte) 4);

    private static final AcknowledgeType[] VALUES = values();

    public final byte id;

    AcknowledgeType(byte id) {
        this.id = id;
    }

    /**
     * The type with this wire id, GAP included.
     *
     * @throws IllegalArgumentException for an unknown id (the server answers INVALID_REQUEST)
     */
    public static AcknowledgeType forId(byte id) {
        if (id < 0 || id >= VALUES.length) {
            throw new IllegalArgumentException("unknown acknowledge type id " + id);
        }
        return VALUES[id];
    }
}
