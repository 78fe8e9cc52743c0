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
        for (ClassicGroupListing g : consumers.classic()) {
            counts.merge(new GroupSnapshot.Kind(GroupSnapshot.CLASSIC, g.state().toString()), 1, Integer::sum);
        }
        for (ConsumerGroupListing g : consumers.consumer()) {
            counts.merge(new GroupSnapshot.Kind(GroupSnapshot.CONSUMER, g.state().toString()), 1, Integer::sum);
        }
        for (GroupListing g : shareGroups.groupsOn(shard)) {
            counts.merge(new GroupSnapshot.Kind(GroupSnapshot.SHARE, g.state().toString()), 1, Integer::sum);
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
        return new GroupSnapshot(counts, consumers.classicRebalances(), consumers.consumerRebalances(), committed);
    }
}
