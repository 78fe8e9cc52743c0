package io.pier.txn;

import org.apache.kafka.common.protocol.Errors;

/**
 * The answer of InitProducerId, and of EndTxn (whose TV2 response carries the producer id and
 * epoch to go on with): an error, or NONE and the id and epoch. -1/-1 with an error.
 */
public record ProducerIdAndEpoch(Errors error, long producerId, short producerEpoch) {
    public static ProducerIdAndEpoch error(Errors error) {
        return new ProducerIdAndEpoch(error, -1, (short) -1);
    }
}
