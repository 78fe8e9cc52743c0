package io.pier.group;

import java.util.List;

/**
 * A JoinGroup request, decoded.
 *
 * @param memberId "" for a member that has none yet
 * @param groupInstanceId null for a dynamic member
 * @param requireKnownMemberId v4+: a new dynamic member is first answered MEMBER_ID_REQUIRED (KIP-394)
 * @param supportsSkipAssignment v9+: a static leader's rejoin may skip the assignment (KIP-814)
 */
public record ClassicJoin(String groupId, String memberId, String groupInstanceId, String clientId,
        String clientHost, int sessionTimeoutMs, int rebalanceTimeoutMs, String protocolType,
        List<ClassicProtocol> protocols, boolean requireKnownMemberId, boolean supportsSkipAssignment) {}
