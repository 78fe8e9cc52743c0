package io.pier.group;

import java.util.List;
import org.apache.kafka.common.Uuid;

/** The partitions of one topic assigned to a member, as ShareGroupDescribe reports them. */
public record AssignedTopic(Uuid topicId, String topicName, List<Integer> partitions) {}
