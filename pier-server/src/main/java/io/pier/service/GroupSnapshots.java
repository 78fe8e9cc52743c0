package io.pier.service;

import io.pier.group.ClassicGroupListing;
import io.pier.group.GroupListing;
import io.pier.group.consumer.ConsumerGroupListing;
import io.pier.metrics.GroupSnapshot;
import io.pier.state.OffsetStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Takes, on a shard, the {@link GroupSnapshot} of the groups it coordinates: how many of each type
 * are in each state, the rebalance counts, and the committed offsets of its consumer groups.
 * Nothing here is counted on the request path: the coordinators' listings and counters are read
 * once per snapshot interval.
 */
final class GroupSnapshots {
    private final PartitionRegistry partitions;
    private final ConsumerGroups consumerGroups;
    private final ShareGroups shareGroups;
    private final OffsetStore offsets;

    GroupSnapshots(PartitionRegistry partitions, ConsumerGroups consumerGroups, ShareGroups shareGroups,
            OffsetStore offsets) {
        this.partitions = partitions;
        this.consumerGroups = consumerGroups;
        this.shareGroups = shareGroups;
        this.offsets = offsets;
    }

    /** Shard thread of {@code shard} only. */
    GroupSnapshot take(Shard shard) {
        ConsumerGroups.OnShard consumers = consumerGroups.groupsOn(shard);
        Map<GroupSnapshot.Kind, Integer> counts = new HashMap<>();
        List<GroupSnapshot.Listed> listed = new ArrayList<>();
        for (ClassicGroupListing g : consumers.classic()) {
            count(counts, listed, GroupSnapshot.CLASSIC, g.groupId(), g.state().toString());
        }
        for (ConsumerGroupListing g : consumers.consumer()) {
            count(counts, listed, GroupSnapshot.CONSUMER, g.groupId(), g.state().toString());
        }
        for (GroupListing g : shareGroups.groupsOn(shard)) {
            count(counts, listed, GroupSnapshot.SHARE, g.groupId(), g.state().toString());
        }
        // The store's view is immutable and any thread may read it; each shard takes the offsets
        // of the group ids that hash to it, so every group is shown once, beside its state.
        List<GroupSnapshot.Committed> committed = new ArrayList<>();
        for (String groupId : offsets.groups()) {
            if (partitions.shardForKey(groupId) == shard) {
                offsets.offsets(groupId).forEach((tp, o) -> committed.add(
                        new GroupSnapshot.Committed(groupId, tp.topic(), tp.partition(), o.offset())));
            }
        }
        return new GroupSnapshot(counts, consumers.classicRebalances(), consumers.consumerRebalances(), committed,
                listed);
    }

    private static void count(Map<GroupSnapshot.Kind, Integer> counts, List<GroupSnapshot.Listed> listed, String type,
            String groupId, String state) {
        counts.merge(new GroupSnapshot.Kind(type, state), 1, Integer::sum);
        listed.add(new GroupSnapshot.Listed(groupId, type, state));
    }
}
