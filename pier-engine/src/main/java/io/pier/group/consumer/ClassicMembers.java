package io.pier.group.consumer;

import io.pier.group.ClassicGroupHandover;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicMemberState;
import io.pier.group.ClassicProtocol;
import io.pier.group.ClassicSync;
import io.pier.group.ClassicSyncResult;
import io.pier.group.PartitionKey;
import io.pier.group.TopicInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

/**
 * Classic-protocol members inside a consumer-protocol group (KIP-848 online migration, Kafka 4.4's
 * default {@code bidirectional} policy): during a rolling upgrade or downgrade a group holds
 * members of both protocols. The broker's assignor decides for everyone; a classic member learns
 * its part through the calls it knows: JoinGroup is answered at once with its member epoch as the
 * generation, SyncGroup with its current partitions in the embedded consumer protocol's encoding,
 * and Heartbeat says REBALANCE_IN_PROGRESS when it must rejoin to move on (a newer group epoch,
 * partitions to revoke, or partitions freed for it). What it owns comes with each JoinGroup's
 * subscription, so revocation before reassignment holds for both protocols alike.
 *
 * <p>Part of its {@link ConsumerGroupCoordinator}, on the same thread.
 */
final class ClassicMembers {
    private final ConsumerGroupCoordinator coordinator;

    ClassicMembers(ConsumerGroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /** A classic group's members join this protocol's group, keeping their partitions and generation. */
    void adopt(String groupId, ClassicGroupHandover handover, long nowMs) {
        ConsumerGroup group = coordinator.createGroup(groupId);
        for (ClassicMemberState s : handover.members()) {
            ConsumerMember m = new ConsumerMember(s.memberId());
            m.instanceId = s.groupInstanceId();
            m.clientId = s.clientId();
            m.clientHost = s.clientHost();
            m.rebalanceTimeoutMs = s.rebalanceTimeoutMs();
            m.classicSessionTimeoutMs = s.sessionTimeoutMs();
            m.classicProtocols = s.protocols();
            m.subscribedTopicNames = subscription(s.protocols()).topics();
            m.memberEpoch = handover.generationId();
            m.previousMemberEpoch = handover.generationId();
            group.add(m);
            group.adoptAssigned(m, partitions(decodeAssignment(s.assignment())));
            coordinator.arm(group, m, nowMs + m.classicSessionTimeoutMs);
        }
        group.adoptEpoch(handover.generationId());
    }

    /** The classic members of a group, for the classic coordinator: generation and assignments. */
    ClassicGroupHandover handOver(ConsumerGroup group) {
        List<ClassicMemberState> out = new ArrayList<>();
        for (ConsumerMember m : group.members()) {
            out.add(new ClassicMemberState(m.memberId, m.instanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs,
                    m.classicSessionTimeoutMs, m.classicProtocols, encodeAssignment(group, m)));
        }
        return new ClassicGroupHandover(group.groupEpoch(), out);
    }

    ClassicJoinResult join(ClassicJoin req, String newMemberId, long nowMs) {
        if (!"consumer".equals(req.protocolType()) || req.protocols().isEmpty()) {
            return ClassicJoinResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL, req.memberId());
        }
        ConsumerProtocolSubscriptionView sub;
        try {
            sub = subscription(req.protocols());
        } catch (RuntimeException e) {
            return ClassicJoinResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL, req.memberId());
        }
        ConsumerGroup group = coordinator.group(req.groupId());
        boolean unknown = req.memberId().isEmpty();
        String memberId = unknown ? newMemberId : req.memberId();
        ConsumerMember member = group.member(memberId).orElse(null);
        if (req.groupInstanceId() != null) {
            ConsumerMember existing = group.staticMember(req.groupInstanceId()).orElse(null);
            if (existing != null && existing != member) {
                if (!unknown) {
                    return ClassicJoinResult.error(Errors.FENCED_INSTANCE_ID, req.memberId());
                }
                // A static member restarted: the new process takes the old one's place and partitions.
                coordinator.unschedule(existing);
                member = group.replaceStatic(existing, memberId);
                member.rejoin();
            }
        } else if (unknown && req.requireKnownMemberId()) {
            return ClassicJoinResult.error(Errors.MEMBER_ID_REQUIRED, memberId);
        }
        boolean rebalance = false;
        if (member == null) {
            if (!unknown && req.groupInstanceId() == null) {
                return ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, req.memberId());
            }
            if (group.size() >= coordinator.broker().maxSize()) {
                return ClassicJoinResult.error(Errors.GROUP_MAX_SIZE_REACHED, memberId);
            }
            member = new ConsumerMember(memberId);
            member.instanceId = req.groupInstanceId();
            group.add(member);
            rebalance = true;
        }
        member.clientId = req.clientId() == null ? "" : req.clientId();
        member.clientHost = req.clientHost() == null ? "" : req.clientHost();
        member.rebalanceTimeoutMs = req.rebalanceTimeoutMs();
        member.classicSessionTimeoutMs = req.sessionTimeoutMs();
        member.classicProtocols = List.copyOf(req.protocols());
        if (sub.rackId() != null) {
            member.rackId = sub.rackId();
        }
        List<String> names = List.copyOf(new TreeSet<>(sub.topics()));
        rebalance |= !names.equals(member.subscribedTopicNames);
        member.subscribedTopicNames = names;
        if (rebalance) {
            group.rebalance(coordinator.topics(), coordinator.broker().defaultAssignor(), true);
        }
        coordinator.reconcile(group, member, partitions(sub.ownedPartitions()), nowMs);
        // The SyncGroup that follows must come within the rebalance timeout, else the session ends.
        coordinator.arm(group, member, nowMs + Math.max(member.classicSessionTimeoutMs, member.rebalanceTimeoutMs));
        return new ClassicJoinResult(Errors.NONE, member.memberEpoch, "consumer", member.classicProtocols.get(0).name(),
                "", member.memberId, false, List.of());
    }

    ClassicSyncResult sync(ClassicSync req, long nowMs) {
        ConsumerGroup group = coordinator.group(req.groupId());
        ConsumerMember member = find(group, req.memberId(), req.groupInstanceId());
        Errors error = check(member, req.memberId(), req.generationId());
        if (error != Errors.NONE) {
            return ClassicSyncResult.error(error);
        }
        if ((req.protocolType() != null && !"consumer".equals(req.protocolType()))
                || (req.protocolName() != null && !req.protocolName().equals(member.classicProtocols.get(0).name()))) {
            return ClassicSyncResult.error(Errors.INCONSISTENT_GROUP_PROTOCOL);
        }
        if (group.groupEpoch() > member.memberEpoch && member.state != MemberState.UNREVOKED_PARTITIONS) {
            return ClassicSyncResult.error(Errors.REBALANCE_IN_PROGRESS);
        }
        coordinator.arm(group, member, nowMs + member.classicSessionTimeoutMs);
        return new ClassicSyncResult(Errors.NONE, "consumer", member.classicProtocols.get(0).name(),
                encodeAssignment(group, member));
    }

    Errors heartbeat(String groupId, String memberId, String groupInstanceId, int generationId, long nowMs) {
        ConsumerGroup group = coordinator.group(groupId);
        ConsumerMember member = find(group, memberId, groupInstanceId);
        Errors error = check(member, memberId, generationId);
        if (error != Errors.NONE) {
            return error;
        }
        coordinator.arm(group, member, nowMs + member.classicSessionTimeoutMs);
        boolean mustRejoin = member.memberEpoch < group.groupEpoch()
                || member.state == MemberState.UNREVOKED_PARTITIONS
                || (member.state == MemberState.UNRELEASED_PARTITIONS && !group.waitsOnOthers(member));
        return mustRejoin ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
    }

    ClassicLeave.Result leave(String groupId, List<ClassicLeave.Member> leaving) {
        ConsumerGroup group = coordinator.group(groupId);
        List<ClassicLeave.MemberResult> results = new ArrayList<>();
        for (ClassicLeave.Member l : leaving) {
            ConsumerMember m = l.groupInstanceId() != null
                    ? group.staticMember(l.groupInstanceId()).orElse(null)
                    : group.member(l.memberId()).orElse(null);
            Errors e;
            if (m == null) {
                e = Errors.UNKNOWN_MEMBER_ID;
            } else if (l.groupInstanceId() != null && !l.memberId().isEmpty() && !l.memberId().equals(m.memberId)) {
                e = Errors.FENCED_INSTANCE_ID;
            } else {
                coordinator.fence(group, m);
                e = Errors.NONE;
            }
            results.add(new ClassicLeave.MemberResult(l.memberId(), l.groupInstanceId(), e));
        }
        return new ClassicLeave.Result(Errors.NONE, results);
    }

    private static ConsumerMember find(ConsumerGroup group, String memberId, String groupInstanceId) {
        if (group == null) {
            return null;
        }
        return groupInstanceId != null ? group.staticMember(groupInstanceId).orElse(null)
                : group.member(memberId).orElse(null);
    }

    /** UNKNOWN_MEMBER_ID for no (classic) member, FENCED_INSTANCE_ID, ILLEGAL_GENERATION for another epoch. */
    private static Errors check(ConsumerMember member, String memberId, int generationId) {
        if (member == null || !member.isClassic()) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (!member.memberId.equals(memberId)) {
            return Errors.FENCED_INSTANCE_ID;
        }
        return generationId == member.memberEpoch ? Errors.NONE : Errors.ILLEGAL_GENERATION;
    }

    /** The subscription a JoinGroup carries (every protocol of a consumer carries the same one). */
    private static ConsumerProtocolSubscriptionView subscription(List<ClassicProtocol> protocols) {
        ConsumerPartitionAssignor.Subscription s =
                ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(protocols.get(0).metadata()));
        return new ConsumerProtocolSubscriptionView(s.topics(), s.ownedPartitions(), s.rackId().orElse(null));
    }

    private record ConsumerProtocolSubscriptionView(List<String> topics, List<TopicPartition> ownedPartitions,
            String rackId) {}

    private Set<PartitionKey> partitions(List<TopicPartition> named) {
        Set<PartitionKey> out = new HashSet<>();
        for (TopicPartition tp : named) {
            coordinator.topics().byName(tp.topic()).ifPresent(t -> out.add(new PartitionKey(t.id(), tp.partition())));
        }
        return out;
    }

    private static List<TopicPartition> decodeAssignment(byte[] assignment) {
        if (assignment == null || assignment.length == 0) {
            return List.of();
        }
        try {
            return ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(assignment)).partitions();
        } catch (RuntimeException e) {
            return List.of(); // not the consumer protocol's encoding: the member starts with nothing
        }
    }

    /** The member's current partitions, in the version of the consumer protocol it speaks. */
    private byte[] encodeAssignment(ConsumerGroup group, ConsumerMember member) {
        List<TopicPartition> named = new ArrayList<>();
        for (PartitionKey p : new TreeSet<>(member.assigned)) {
            String name = group.topicName(p.topicId());
            if (name == null) {
                name = coordinator.topics().byId(p.topicId()).map(TopicInfo::name).orElse(null);
            }
            if (name != null) {
                named.add(new TopicPartition(name, p.partition()));
            }
        }
        short version = ConsumerProtocol.deserializeVersion(ByteBuffer.wrap(member.classicProtocols.get(0).metadata()));
        ByteBuffer buf = ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(named), version);
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }
}
