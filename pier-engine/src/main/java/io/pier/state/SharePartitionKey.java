package io.pier.state;

import java.util.Objects;
import org.apache.kafka.common.Uuid;

/**
 * Identifies one share-partition's durable state: a share group on one topic-partition. The same
 * triple Kafka's share coordinator uses as its key ({@code "<groupId>:<topicId>:<partition>"}).
 */
public record SharePartitionKey(String groupId, Uuid topicId, int partition) {
    public SharePartitionKey {
        Objects.requireNonNull(groupId, "groupId");
        Objects.requireNonNull(topicId, "topicId");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
    }

    /** The coordinator key form, as Kafka spells it. */
    public String coordinatorKey() {
        return groupId + ":" + topicId + ":" + partition;
    }
}
