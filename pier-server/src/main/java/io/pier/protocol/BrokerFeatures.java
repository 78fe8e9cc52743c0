package io.pier.protocol;

import io.pier.txn.TransactionConfig;
import java.util.List;
import org.apache.kafka.common.message.ApiVersionsResponseData;

/**
 * The feature flags (KIP-584) that ApiVersions v3+ advertises: for each feature the levels this
 * broker supports and the level in force. kafka-clients reads {@code transaction.version} from
 * here: at 2 a transactional producer lets Produce add its partitions and expects an epoch bump
 * from every EndTxn (KIP-890 part 2), below 2 it sends AddPartitionsToTxn. Admin's
 * describeFeatures and {@code kafka-features describe} show the same list.
 *
 * @param epoch when the finalized levels were set; a client takes new levels only from a larger
 *     epoch, so it is the broker's start time: a level changed by a restart is seen at once
 */
public record BrokerFeatures(long epoch, List<Feature> features) {
    /**
     * One feature: what this broker can serve, and what it does serve.
     *
     * @param finalized the level in force; 0 means off, and is not listed as finalized (as in Kafka)
     */
    public record Feature(String name, short minSupported, short maxSupported, short finalized) {
        public Feature {
            if (finalized < minSupported || finalized > maxSupported) {
                throw new IllegalArgumentException(name + "=" + finalized + " is outside the supported levels "
                        + minSupported + ".." + maxSupported);
            }
        }
    }

    public BrokerFeatures {
        features = List.copyOf(features);
    }

    /** The features of this broker: transaction versions 0 to 2, {@code transactionVersion} in force. */
    public static BrokerFeatures of(short transactionVersion, long epoch) {
        return new BrokerFeatures(epoch, List.of(
                new Feature(TransactionConfig.TRANSACTION_VERSION, (short) 0,
                        TransactionConfig.LATEST_TRANSACTION_VERSION, transactionVersion)));
    }

    /** Adds the supported and finalized features to an ApiVersions response (tagged fields, v3+). */
    void addTo(ApiVersionsResponseData data) {
        data.setFinalizedFeaturesEpoch(epoch);
        for (Feature f : features) {
            data.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey()
                    .setName(f.name()).setMinVersion(f.minSupported()).setMaxVersion(f.maxSupported()));
            if (f.finalized() > 0) {
                data.finalizedFeatures().add(new ApiVersionsResponseData.FinalizedFeatureKey()
                        .setName(f.name()).setMinVersionLevel(f.finalized()).setMaxVersionLevel(f.finalized()));
            }
        }
    }
}
