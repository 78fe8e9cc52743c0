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
                Integer.parseInt(props.getOrDefault("transaction.max.timeout.ms",
                        String.valueOf(DEFAULTS.maxTimeoutMs))),
                Long.parseLong(props.getOrDefault("transactional.id.expiration.ms",
                        String.valueOf(DEFAULTS.idExpirationMs))),
                Long.parseLong(props.getOrDefault("pier.transaction.marker.retry.backoff.ms",
                        String.valueOf(DEFAULTS.markerRetryBackoffMs))),
                Short.parseShort(props.getOrDefault(TRANSACTION_VERSION,
                        String.valueOf(DEFAULTS.transactionVersion)).trim()));
    }
}
