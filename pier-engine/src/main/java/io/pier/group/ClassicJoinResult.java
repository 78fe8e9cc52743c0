package io.pier.group;

import java.util.List;
import org.apache.kafka.common.protocol.Errors;

/**
 * The answer to a JoinGroup; {@code members} (with their metadata for the chosen protocol) only
 * for the leader.
 */
public record ClassicJoinResult(Errors error, int generationId, String protocolType, String protocolName,
        String leaderId, String memberId, boolean skipAssignment, List<Member> members) {
    /** One member as the leader sees it. */
    public record Member(String memberId, String groupInstanceId, byte[] metadata) {}

    public static ClassicJoinResult error(Errors error, String memberId) {
        return new ClassicJoinResult(error, -1, null, null, "", memberId, false, List.of());
    }
}
