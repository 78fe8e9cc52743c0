package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.LogSnapshot;
import io.pier.metrics.PierMetrics;
import io.pier.metrics.SharePartitionSnapshot;
import java.util.List;

/**
 * What the shards last published for the metrics, read once per page: immutable snapshots, so a
 * page never touches engine state and costs O(snapshots), whatever the number of records.
 */
record Published(List<SharePartitionSnapshot> shares, List<LogSnapshot> logs, List<GroupSnapshot> groups) {
    Published {
        shares = List.copyOf(shares);
        logs = List.copyOf(logs);
        groups = List.copyOf(groups);
    }

    static Published of(PierMetrics metrics) {
        return new Published(metrics.sharePartitions(), metrics.logs(), metrics.groups());
    }

    /** The listing of {@code group} if it is a group of {@code share} type or not; null if none. */
    GroupSnapshot.Listed listed(String group, boolean share) {
        for (GroupSnapshot.Listed g : Figures.listed(groups)) {
            if (g.group().equals(group) && g.type().equals(GroupSnapshot.SHARE) == share) {
                return g;
            }
        }
        return null;
    }
}
