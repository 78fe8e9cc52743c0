package io.pier.group;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.protocol.Errors;

/**
 * The classic-protocol group coordinator of one shard: the groups whose ids hash there, each a
 * {@link ClassicGroup} state machine. Pure and single-owner: no threads, no clock (every call
 * carries {@code nowMs}); a parked JoinGroup or SyncGroup is a callback answered during a later
 * call, and the owner runs {@link #onDeadlines} once {@link #nextDeadlineMs()} has come.
 *
 * <p>Groups live only in memory; after a restart members rejoin (UNKNOWN_MEMBER_ID) while the
 * committed offsets, which are durable, are kept by their own store. An Empty group is kept until
 * it is deleted, by DeleteGroups or, as in Kafka, once its offsets expired ({@link #emptySinceMs}).
 */
public final class ClassicGroupCoordinator {
    /** The protocol type of Kafka's consumers; others (Connect, Streams' own) pass through unread. */
    static final String CONSUMER_PROTOCOL_TYPE = "consumer";

    private final ClassicGroupConfig config;
    private final Supplier<String> memberIdSuffix;
    private final Map<String, ClassicGroup> groups = new HashMap<>();
    private final RebalanceCounter rebalances = new RebalanceCounter();

    /** @param memberIdSuffix the unique part of new member ids (a random UUID on a broker) */
    public ClassicGroupCoordinator(ClassicGroupConfig config, Supplier<String> memberIdSuffix) {
        this.config = config;
        this.memberIdSuffix = memberIdSuffix;
    }

    public boolean exists(String groupId) {
        return groups.containsKey(groupId);
    }

    /**
     * Restores Empty groups that have committed offsets (after a restart). When a group became
     * Empty is not kept across a restart, so for offset retention it is Empty from {@code nowMs}:
     * its offsets then never expire sooner than they would have without the restart.
     */
    public void restoreEmptyGroup(String groupId, long nowMs) {
        groups.computeIfAbsent(groupId, id -> new ClassicGroup(id, config, rebalances)).emptySinceMs = nowMs;
    }

    /**
     * Drops an Empty group, whose id a consumer-protocol member takes; true if there is no group
     * left, false if the group has members.
     */
    public boolean removeEmptyGroup(String groupId) {
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            return true;
        }
        if (!group.isEmpty()) {
            return false;
        }
        groups.remove(groupId);
        return true;
    }

    /**
     * Whether a consumer-protocol member may take this group over (KIP-848 online upgrade, which
     * Kafka 4.4 allows by default): it has members, and they use the embedded consumer protocol.
     */
    public boolean isUpgradable(String groupId) {
        ClassicGroup group = groups.get(groupId);
        return group != null && !group.isEmpty() && CONSUMER_PROTOCOL_TYPE.equals(group.protocolType());
    }

    /** Hands an upgradable group over to the consumer protocol; it is gone from here after. */
    public ClassicGroupHandover handOver(String groupId) {
        ClassicGroup group = groups.remove(groupId);
        return group.handOver();
    }

    /** Takes a group over from the consumer protocol (online downgrade), rebalancing at once. */
    public void adopt(String groupId, ClassicGroupHandover handover, long nowMs) {
        ClassicGroup group = new ClassicGroup(groupId, config, rebalances);
        groups.put(groupId, group);
        group.adopt(handover, nowMs);
    }

    /** JoinGroup; {@code reply} is called now or when the join phase ends. */
    public void join(ClassicJoin req, long nowMs, Consumer<ClassicJoinResult> reply) {
        if (req.groupId() == null || req.groupId().isEmpty()) {
            reply.accept(ClassicJoinResult.error(Errors.INVALID_GROUP_ID, req.memberId()));
            return;
        }
        if (req.sessionTimeoutMs() < config.minSessionTimeoutMs() || req.sessionTimeoutMs() > config.maxSessionTimeoutMs()) {
            reply.accept(ClassicJoinResult.error(Errors.INVALID_SESSION_TIMEOUT, req.memberId()));
            return;
        }
        ClassicGroup group = groups.get(req.groupId());
        boolean created = false;
        if (group == null) {
            if (!req.memberId().isEmpty()) {
                reply.accept(ClassicJoinResult.error(Errors.UNKNOWN_MEMBER_ID, req.memberId()));
                return;
            }
            group = new ClassicGroup(req.groupId(), config, rebalances);
            groups.put(req.groupId(), group);
            created = true;
        }
        String prefix = req.groupInstanceId() != null ? req.groupInstanceId() : req.clientId();
        boolean[] answered = {false};
        Errors[] error = {Errors.NONE};
        group.join(req, prefix + "-" + memberIdSuffix.get(), nowMs, r -> {
            answered[0] = true;
            error[0] = r.error();
            reply.accept(r);
        });
        if (created && answered[0] && error[0] != Errors.NONE && error[0] != Errors.MEMBER_ID_REQUIRED) {
            groups.remove(req.groupId()); // a refused first join leaves no group behind
        }
    }

    public void sync(ClassicSync req, long nowMs, Consumer<ClassicSyncResult> reply) {
        ClassicGroup group = groups.get(req.groupId());
        if (group == null) {
            reply.accept(ClassicSyncResult.error(Errors.UNKNOWN_MEMBER_ID));
        } else {
            group.sync(req, nowMs, reply);
        }
    }

    public Errors heartbeat(String groupId, String memberId, String groupInstanceId, int generationId, long nowMs) {
        ClassicGroup group = groups.get(groupId);
        return group == null ? Errors.UNKNOWN_MEMBER_ID : group.heartbeat(memberId, groupInstanceId, generationId, nowMs);
    }

    public ClassicLeave.Result leave(String groupId, List<ClassicLeave.Member> members, long nowMs) {
        ClassicGroup group = groups.get(groupId);
        return group == null ? new ClassicLeave.Result(Errors.UNKNOWN_MEMBER_ID, List.of()) : group.leave(members, nowMs);
    }

    /**
     * Whether an OffsetCommit may go ahead: a commit with generation -1 to an unknown id creates a
     * simple (Empty) group; with a generation it is GROUP_ID_NOT_FOUND from v9, else ILLEGAL_GENERATION.
     */
    public Errors validateOffsetCommit(String groupId, String memberId, String groupInstanceId, int generationId,
            short apiVersion, long nowMs) {
        ClassicGroup group = groups.get(groupId);
        if (group == null) {
            if (generationId >= 0) {
                return apiVersion >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
            }
            group = new ClassicGroup(groupId, config, rebalances);
            groups.put(groupId, group);
        }
        return group.validateOffsetCommit(memberId, groupInstanceId, generationId, nowMs);
    }

    /**
     * Whether the offsets of {@code topic} may be deleted: NONE for an Empty group or a consumer
     * group not subscribed to it, GROUP_SUBSCRIBED_TO_TOPIC, NON_EMPTY_GROUP for a non-consumer
     * protocol in use, GROUP_ID_NOT_FOUND.
     */
    public Errors validateOffsetDelete(String groupId, String topic) {
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.state() == ClassicGroupState.DEAD) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (group.isEmpty()) {
            return Errors.NONE;
        }
        if (!CONSUMER_PROTOCOL_TYPE.equals(group.protocolType())) {
            return Errors.NON_EMPTY_GROUP;
        }
        return subscribedTopics(group).contains(topic) ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : Errors.NONE;
    }

    /** The topics a consumer group's members subscribe to; every topic counts while unknown. */
    private static Set<String> subscribedTopics(ClassicGroup group) {
        Set<String> topics = new HashSet<>();
        List<byte[]> metadata = group.memberMetadata();
        if (metadata.isEmpty()) {
            return new AllTopics();
        }
        for (byte[] m : metadata) {
            try {
                topics.addAll(ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(m)).topics());
            } catch (RuntimeException e) {
                return new AllTopics(); // unreadable: treat the group as subscribed to everything
            }
        }
        return topics;
    }

    /** A set that contains every topic. */
    private static final class AllTopics extends HashSet<String> {
        @Override
        public boolean contains(Object o) {
            return true;
        }
    }

    /** DeleteGroups: NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for no classic group. */
    public Errors deleteGroup(String groupId) {
        ClassicGroup group = groups.get(groupId);
        if (group == null || group.state() == ClassicGroupState.DEAD) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (!group.isEmpty()) {
            return Errors.NON_EMPTY_GROUP;
        }
        group.markDead();
        groups.remove(groupId);
        return Errors.NONE;
    }

    /**
     * For offset retention: when the group became Empty (monotonic ms); Long.MIN_VALUE if it never
     * had members (a simple group, Kafka's group without a protocol type); Long.MAX_VALUE while it
     * has members or members about to join, or if there is no such group.
     */
    public long emptySinceMs(String groupId) {
        ClassicGroup group = groups.get(groupId);
        return group == null || !group.isEmpty() || !group.pendingMembers.isEmpty()
                ? Long.MAX_VALUE
                : group.emptySinceMs;
    }

    /**
     * For offset retention of a group with members: whether its offsets of {@code topic} are kept
     * whatever their age. Kafka lets them expire only in a Stable consumer-protocol group whose
     * members do not subscribe to the topic.
     */
    public boolean keepsOffsetsOf(String groupId, String topic) {
        ClassicGroup group = groups.get(groupId);
        return group == null || group.state() != ClassicGroupState.STABLE
                || !CONSUMER_PROTOCOL_TYPE.equals(group.protocolType()) || subscribedTopics(group).contains(topic);
    }

    public Optional<ClassicGroupDescription> describe(String groupId) {
        return Optional.ofNullable(groups.get(groupId)).map(ClassicGroup::describe);
    }

    public List<ClassicGroupListing> listGroups() {
        List<ClassicGroupListing> all = new ArrayList<>();
        for (ClassicGroup g : groups.values()) {
            all.add(new ClassicGroupListing(g.groupId, g.state(), g.protocolType() == null ? "" : g.protocolType()));
        }
        return all;
    }

    /** The earliest deadline of any group (a session, the end of a join or sync phase). */
    public long nextDeadlineMs() {
        long next = Long.MAX_VALUE;
        for (ClassicGroup g : groups.values()) {
            next = Math.min(next, g.nextDeadlineMs());
        }
        return next;
    }

    /** Runs every group's deadlines that are due at {@code nowMs}. */
    public void onDeadlines(long nowMs) {
        for (ClassicGroup g : new ArrayList<>(groups.values())) {
            if (g.nextDeadlineMs() <= nowMs) {
                g.onDeadlines(nowMs);
            }
        }
    }

    /** Generations started by this coordinator's groups since it was made (deleted groups included). */
    public long rebalances() {
        return rebalances.count();
    }
}
