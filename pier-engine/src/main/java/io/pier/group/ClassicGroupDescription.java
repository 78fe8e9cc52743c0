package io.pier.group;

import java.util.List;

/**
 * A classic group as DescribeGroups shows it: the protocol and members' metadata and assignments
 * only while Stable, as in Kafka.
 */
public record ClassicGroupDescription(String groupId, ClassicGroupState state, String protocolType,
        String protocolName, List<Member> members) {
    public record Member(String memberId, String groupInstanceId, String clientId, String clientHost,
            byte[] metadata, byte[] assignment) {}
}
