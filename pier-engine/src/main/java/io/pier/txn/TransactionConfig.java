package io.pier.txn;

import java.util.Map;

/**
 * The coordinator's settings, Kafka's names and defaults.
 *
 * @param maxTimeoutMs {@code transaction.max.timeout.ms} (900000): the largest transaction timeout
 *     InitProducerId accepts
 * @param idExpirationMs {@code transactional.id.expiration.ms} (604800000, 7 days): how long an
 *     idle transactional id is kept
 * @param markerRetryBackoffMs how soon markers that failed are written again (Pier's own)
 * @param transactionVersion {@code transaction.version} (2), the finalized feature level Kafka sets
 *     with {@code kafka-storage format --feature}: 2 lets clients use KIP-890 part 2 (partitions
 *     joined by Produce, an epoch bump at every EndTxn); 1 (or 0) keeps every client on
 *     AddPartitionsToTxn
 */
public record TransactionConfig(int maxTimeoutMs, long idExpirationMs, long markerRetryBackoffMs,
        short transactionVersion) {
    public static final String TRANSACTION_VERSION = "transaction.version";
    public static final short LATEST_TRANSACTION_VERSION = 2;
    public static final TransactionConfig DEFAULTS =
            new TransactionConfig(900_000, 604_800_000L, 1_000, LATEST_TRANSACTION_VERSION);

    public TransactionConfig {
        if (maxTimeoutMs < 1) {
            throw new IllegalArgumentException("transaction.max.timeout.ms must be at least 1: " + maxTimeoutMs);
        }
        if (idExpirationMs < 1) {
            throw new IllegalArgumentException("transactional.id.expiration.ms must be at least 1: " + idExpirationMs);
        }
        if (markerRetryBackoffMs < 1) {
            throw new IllegalArgumentException("pier.transaction.marker.retry.backoff.ms must be at least 1");
        }
        if (transactionVersion < 0 || transactionVersion > LATEST_TRANSACTION_VERSION) {
            throw new IllegalArgumentException(TRANSACTION_VERSION + " must be 0, 1 or 2: " + transactionVersion);
        }
    }

    /** Whether clients may use transaction version 2 (KIP-890 part 2). */
    public boolean transactionV2() {
        return transactionVersion >= 2;
    }

    public static TransactionConfig fromProperties(Map<String, String> props) {
        return new TransactionConfig(
                (int) number(props, "transaction.max.timeout.ms", DEFAULTS.maxTimeoutMs, Integer.MAX_VALUE),
                number(props, "transactional.id.expiration.ms", DEFAULTS.idExpirationMs, Long.MAX_VALUE),
                number(props, "pier.transaction.marker.retry.backoff.ms", DEFAULTS.markerRetryBackoffMs,
                        Long.MAX_VALUE),
                (short) number(props, TRANSACTION_VERSION, DEFAULTS.transactionVersion, Short.MAX_VALUE));
    }

    /** {@code name}'s whole-number value, at most {@code max}, or a message naming the setting. */
    private static long number(Map<String, String> props, String name, long defaultValue, long max) {
        String raw = props.get(name);
        if (raw == null) {
            return defaultValue;
        }
        try {
            long v = Long.parseLong(raw.trim());
            if (v > max || v < -max - 1) {
                throw new NumberFormatException("out of range");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + raw + "'", e);
        }
    }
}
