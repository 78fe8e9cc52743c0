package io.pier.share;

/** ShareFetch {@code AcquiredRecords}: offsets handed to one member, inclusive. */
public record AcquiredRange(long firstOffset, long lastOffset, short deliveryCount) {
    public long recordCount() {
        return lastOffset - firstOffset + 1;
    }
}
