package io.pier.group;

import java.util.List;

/**
 * A classic-protocol member as it passes between a classic group and a consumer-protocol group of
 * the same id (KIP-848 online migration): what its JoinGroup said and what it was last assigned.
 *
 * @param assignment the member's assignment in the embedded consumer protocol's encoding
 */
public record ClassicMemberState(String memberId, String groupInstanceId, String clientId, String clientHost,
        int rebalanceTimeoutMs, int sessionTimeoutMs, List<ClassicProtocol> protocols, byte[] assignment) {

    public ClassicMemberState {
        protocols = List.copyOf(protocols);
    }
}
