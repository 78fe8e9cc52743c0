package io.pier.group.consumer;

import io.pier.group.AssignedTopic;
import java.util.List;

/** A consumer-protocol group as ConsumerGroupDescribe shows it. Immutable. */
public record ConsumerGroupDescription(String groupId, ConsumerGroupState state, int groupEpoch,
        int assignmentEpoch, String assignorName, List<Member> members) {

    /**
     * One member: what it subscribes to, what it owns now and what it is heading for; {@code classic}
     * for a member that speaks the classic protocol in this group (online migration).
     */
    public record Member(String memberId, String instanceId, String rackId, int memberEpoch, String clientId,
            String clientHost, List<String> subscribedTopicNames, String subscribedTopicRegex,
            List<AssignedTopic> assignment, List<AssignedTopic> targetAssignment, boolean classic) {}
}
