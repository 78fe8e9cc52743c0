package io.pier.group;

import java.util.List;
import java.util.function.Consumer;

/**
 * One member of a classic group, owned by its group (and so by the group's shard). A member with
 * a parked JoinGroup or SyncGroup holds the callback that answers it; every callback is completed
 * exactly once, so the connection's responses stay in order.
 */
final class ClassicGroupMember {
    String memberId;
    final String groupInstanceId;
    final String clientId;
    final String clientHost;
    final String protocolType;
    int rebalanceTimeoutMs;
    int sessionTimeoutMs;
    List<ClassicProtocol> protocols;
    byte[] assignment = ClassicSyncResult.EMPTY_ASSIGNMENT;
    Consumer<ClassicJoinResult> awaitingJoin;
    Consumer<ClassicSyncResult> awaitingSync;
    long heartbeatDeadlineMs = Long.MAX_VALUE;
    /** Joined in the rebalance under way, never answered yet: its session is the new-member timeout. */
    boolean isNew;

    ClassicGroupMember(String memberId, ClassicJoin join) {
        this.memberId = memberId;
        this.groupInstanceId = join.groupInstanceId();
        this.clientId = join.clientId();
        this.clientHost = join.clientHost();
        this.protocolType = join.protocolType();
        this.rebalanceTimeoutMs = join.rebalanceTimeoutMs();
        this.sessionTimeoutMs = join.sessionTimeoutMs();
        this.protocols = List.copyOf(join.protocols());
    }

    /** The metadata this member sent for {@code protocol}, empty if it has none. */
    byte[] metadata(String protocol) {
        for (ClassicProtocol p : protocols) {
            if (p.name().equals(protocol)) {
                return p.metadata();
            }
        }
        return new byte[0];
    }

    boolean supports(String protocol) {
        return protocols.stream().anyMatch(p -> p.name().equals(protocol));
    }

    /** Same protocols with the same metadata, in the same order. */
    boolean matches(List<ClassicProtocol> other) {
        if (other.size() != protocols.size()) {
            return false;
        }
        for (int i = 0; i < other.size(); i++) {
            if (!other.get(i).name().equals(protocols.get(i).name())
                    || !java.util.Arrays.equals(other.get(i).metadata(), protocols.get(i).metadata())) {
                return false;
            }
        }
        return true;
    }

    /** This member's first choice among {@code candidates}. */
    String vote(java.util.Set<String> candidates) {
        for (ClassicProtocol p : protocols) {
            if (candidates.contains(p.name())) {
                return p.name();
            }
        }
        throw new IllegalStateException("member " + memberId + " supports none of " + candidates);
    }

    void answerJoin(ClassicJoinResult result) {
        Consumer<ClassicJoinResult> reply = awaitingJoin;
        awaitingJoin = null;
        if (reply != null) {
            reply.accept(result);
        }
    }

    void answerSync(ClassicSyncResult result) {
        Consumer<ClassicSyncResult> reply = awaitingSync;
        awaitingSync = null;
        if (reply != null) {
            reply.accept(result);
        }
    }
}
