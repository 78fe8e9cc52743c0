package io.pier.group;

import java.util.Objects;
import org.apache.kafka.common.Uuid;

/** A topic as the group coordinator sees it: name, id and current partition count. */
public record TopicInfo(String name, Uuid id, int partitionCount) {

    public TopicInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(id, "id");
        if (partitionCount < 0) {
            throw new IllegalArgumentException("partitionCount must not be negative: " + partitionCount);
        }
    }
}
