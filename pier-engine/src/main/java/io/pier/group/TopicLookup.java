package io.pier.group;

import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/**
 * The coordinator's narrow view of topic metadata. Implementations are read on the coordinator's
 * owner thread and must answer from local state without blocking. After topics are created,
 * deleted or grow partitions, the owner calls {@link ShareGroupCoordinator#onTopicsChanged}.
 */
public interface TopicLookup {

    Optional<TopicInfo> byName(String name);

    Optional<TopicInfo> byId(Uuid id);

    /** Every topic (for consumer groups that subscribe by regular expression). */
    List<TopicInfo> all();
}
