package io.pier.group;

import java.util.List;

/**
 * One member as ShareGroupDescribe reports it. {@code assignment} is what the member was last
 * given, sorted by topic name.
 */
public record MemberDescription(
        String memberId,
        String rackId,
        int memberEpoch,
        String clientId,
        String clientHost,
        List<String> subscribedTopicNames,
        List<AssignedTopic> assignment) {}
