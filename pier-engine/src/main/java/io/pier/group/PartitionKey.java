package io.pier.group;

import java.util.Comparator;
import org.apache.kafka.common.Uuid;

/** One partition of one topic, ordered by topic id then partition. */
public record PartitionKey(Uuid topicId, int partition) implements Comparable<PartitionKey> {

    private static final Comparator<PartitionKey> ORDER =
            Comparator.comparing(PartitionKey::topicId).thenComparingInt(PartitionKey::partition);

    @Override
    public int compareTo(PartitionKey other) {
        return ORDER.compare(this, other);
    }
}
