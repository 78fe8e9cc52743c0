package io.pier.share;

/**
 * The per-partition share of a ShareFetch's limits.
 *
 * @param maxRecords records still wanted from this partition ({@code MaxRecords} left over after
 *     earlier partitions of the same request)
 * @param batchSize {@code BatchSize}: target size of each acquired range in batch_optimized mode
 * @param mode {@code ShareAcquireMode}
 */
public record AcquireLimits(int maxRecords, int batchSize, AcquireMode mode) {
    public AcquireLimits {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be > 0: " + batchSize);
        }
        if (mode == null) {
            throw new IllegalArgumentException("mode is required");
        }
    }
}
