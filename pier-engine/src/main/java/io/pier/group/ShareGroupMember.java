package io.pier.group;

import java.util.List;
import java.util.Set;

/**
 * One member of a share group. Mutable, owned by the {@link ShareGroupCoordinator}'s thread.
 *
 * <p>Invariants: {@code previousMemberEpoch <= memberEpoch}; {@code assignment} is what the member
 * was last told (its target as of {@code memberEpoch}); {@code subscribedTopicNames} is sorted and
 * free of duplicates.
 */
final class ShareGroupMember {
    final String memberId;
    int memberEpoch;
    int previousMemberEpoch;
    String rackId;
    String clientId;
    String clientHost;
    List<String> subscribedTopicNames = List.of();
    Set<PartitionKey> assignment = Set.of();
    long sessionDeadlineMs;

    ShareGroupMember(String memberId) {
        this.memberId = memberId;
    }
}
