package io.pier.group.consumer;

import io.pier.group.ClassicProtocol;
import io.pier.group.PartitionKey;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One consumer-protocol member. Mutable, owned by its {@link ConsumerGroupCoordinator}'s thread.
 *
 * <p>Invariants: {@code assigned} and {@code pendingRevocation} are disjoint and what the group's
 * owner map says this member holds; {@code pendingRevocation} is non-empty exactly in {@link
 * MemberState#UNREVOKED_PARTITIONS}; {@code memberEpoch} is {@link ConsumerHeartbeat#LEAVE_STATIC_EPOCH}
 * while a static member is away (it keeps its partitions until its session ends).
 */
final class ConsumerMember {
    final String memberId;
    String instanceId;
    String rackId;
    String clientId = "";
    String clientHost = "";
    int rebalanceTimeoutMs;
    String serverAssignor;
    List<String> subscribedTopicNames = List.of();
    String subscribedTopicRegex;
    int memberEpoch;
    int previousMemberEpoch;
    MemberState state = MemberState.STABLE;
    Set<PartitionKey> assigned = Set.of();
    Set<PartitionKey> pendingRevocation = Set.of();
    /** The member epoch at which it was given each partition of {@code assigned} and {@code pendingRevocation}. */
    Map<PartitionKey, Integer> assignedAt = Map.of();
    long sessionDeadlineMs = Long.MAX_VALUE;
    /**
     * For a member that speaks the classic protocol inside this group (online migration): the
     * protocols of its last JoinGroup, null for a consumer-protocol member.
     */
    List<ClassicProtocol> classicProtocols;
    /** A classic member's session timeout from its JoinGroup. */
    int classicSessionTimeoutMs;
    /** When the member must have revoked {@code pendingRevocation}, or MAX_VALUE. */
    long revocationDeadlineMs = Long.MAX_VALUE;
    /** Its entry in the coordinator's deadline queue, or null while it has none. */
    ConsumerGroupCoordinator.Deadline scheduled;

    ConsumerMember(String memberId) {
        this.memberId = memberId;
    }

    void updateEpoch(int epoch) {
        previousMemberEpoch = memberEpoch;
        memberEpoch = epoch;
    }

    /** Back to epoch 0 (and previous epoch 0), as a joining member is. */
    void rejoin() {
        memberEpoch = 0;
        previousMemberEpoch = 0;
    }

    boolean isClassic() {
        return classicProtocols != null;
    }

    long nextDeadlineMs() {
        return Math.min(sessionDeadlineMs, revocationDeadlineMs);
    }
}
