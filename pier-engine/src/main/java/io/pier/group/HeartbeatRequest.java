package io.pier.group;

import java.util.List;

/**
 * A ShareGroupHeartbeat request (key 76, v1) as the coordinator needs it, plus the client id and
 * host from the request header and connection. Immutable.
 *
 * @param memberEpoch 0 to join, -1 to leave, otherwise the member's current epoch
 * @param rackId null when not sent; an empty string is invalid
 * @param subscribedTopicNames null means unchanged; required (non-empty) when joining
 */
public record HeartbeatRequest(
        String groupId,
        String memberId,
        int memberEpoch,
        String rackId,
        List<String> subscribedTopicNames,
        String clientId,
        String clientHost) {

    /** The epoch of a leave request. */
    public static final int LEAVE_EPOCH = -1;

    /** The epoch of a join request. */
    public static final int JOIN_EPOCH = 0;
}
