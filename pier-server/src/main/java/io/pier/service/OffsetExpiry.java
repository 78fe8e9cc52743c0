package io.pier.service;

import io.pier.common.Clock;
import io.pier.group.ClassicGroupCoordinator;
import io.pier.group.OffsetExpiration;
import io.pier.group.consumer.ConsumerGroupCoordinator;
import io.pier.state.CommittedOffset;
import io.pier.state.OffsetStore;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard's expiry of committed offsets ({@code offsets.retention.minutes}), run as a duty step
 * every {@code offsets.retention.check.interval.ms}, never on the request path. Each check looks at
 * every group of the shard, those with offsets and those its coordinators hold:
 *
 * <pre>
 *   expired offsets ({@link OffsetExpiration}) --expire--&gt; offset store: tombstones, one fsync
 *                                                                  | durable
 *   the group, if still Empty with no offset left &lt;--shard command--+  is deleted
 *   an Empty group without offsets: deleted in the check (there is nothing to make durable)
 * </pre>
 *
 * <p>A group goes only after its last offset's tombstone is durable, so a crash in between brings
 * back an Empty group with its offsets rather than offsets without their group. The store drops an
 * offset only if it is still the one judged expired: a commit that arrived meanwhile stays.
 * Offsets of a group that neither coordinator holds (a commit that landed after its group was
 * deleted) age from their commits, as a simple group's do.
 *
 * <p>Shard-owned: runs on the shard thread (the store's completions come back as shard commands);
 * the wall-clock present comes from the injected {@link Clock}, the monotonic one from the cycle.
 */
final class OffsetExpiry {
    private static final Logger LOG = LoggerFactory.getLogger(OffsetExpiry.class);

    private final Shard shard;
    private final ClassicGroupCoordinator classic;
    private final ConsumerGroupCoordinator consumer;
    private final OffsetStore offsets;
    private final Predicate<String> ownsGroup;
    private final Clock clock;
    private final OffsetExpiration.Config config;

    /** @param ownsGroup whether a group id is coordinated on {@code shard} */
    OffsetExpiry(Shard shard, ClassicGroupCoordinator classic, ConsumerGroupCoordinator consumer, OffsetStore offsets,
            Predicate<String> ownsGroup, Clock clock, OffsetExpiration.Config config) {
        this.shard = shard;
        this.classic = classic;
        this.consumer = consumer;
        this.offsets = offsets;
        this.ownsGroup = ownsGroup;
        this.clock = clock;
        this.config = config;
    }

    /** The duty step: a check one interval after the first cycle, then every interval. */
    DutyStep step() {
        return DutyStep.every(config.checkIntervalMs(), "offset expiry", false, this::check);
    }

    /** Shard thread: expires what is due at {@code nowMs} (monotonic) in every group of the shard. */
    void check(long nowMs) {
        long nowWallMs = clock.wallMs();
        Set<String> groups = new TreeSet<>();
        for (String groupId : offsets.groups()) {
            if (ownsGroup.test(groupId)) {
                groups.add(groupId);
            }
        }
        classic.listGroups().forEach(l -> groups.add(l.groupId()));
        consumer.listGroups().forEach(l -> groups.add(l.groupId()));
        int expired = 0;
        int deleted = 0;
        for (String groupId : groups) {
            Map<TopicPartition, CommittedOffset> current = offsets.offsets(groupId);
            Map<TopicPartition, CommittedOffset> gone = OffsetExpiration.expired(current, emptySinceMs(groupId),
                    topic -> keepsOffsetsOf(groupId, topic), config, nowWallMs, nowMs);
            if (!gone.isEmpty()) {
                expired += gone.size();
                var unused = offsets.expire(groupId, gone).thenRun(() -> shard.execute(() -> {
                    if (deleteIfGone(groupId)) {
                        LOG.info("Group {} deleted: it is Empty and its last committed offset expired", groupId);
                    }
                }));
            } else if (current.isEmpty() && deleteIfGone(groupId)) {
                deleted++;
            }
        }
        if (expired > 0 || deleted > 0) {
            LOG.info("Shard {}: {} committed offsets expired, {} Empty groups without offsets deleted", shard.id(),
                    expired, deleted);
        }
    }

    private long emptySinceMs(String groupId) {
        if (consumer.exists(groupId)) {
            return consumer.emptySinceMs(groupId);
        }
        return classic.exists(groupId) ? classic.emptySinceMs(groupId) : Long.MIN_VALUE;
    }

    private boolean keepsOffsetsOf(String groupId, String topic) {
        return consumer.exists(groupId) ? consumer.keepsOffsetsOf(groupId, topic) : classic.keepsOffsetsOf(groupId, topic);
    }

    /**
     * Shard thread: deletes the group if it is Empty and has no offset left (a commit may have
     * come since the check); true if it did.
     */
    private boolean deleteIfGone(String groupId) {
        if (!offsets.offsets(groupId).isEmpty() || emptySinceMs(groupId) == Long.MAX_VALUE) {
            return false;
        }
        return consumer.exists(groupId) ? consumer.deleteGroup(groupId) == Errors.NONE
                : classic.exists(groupId) && classic.deleteGroup(groupId) == Errors.NONE;
    }
}
