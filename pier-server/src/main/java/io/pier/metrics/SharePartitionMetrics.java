package io.pier.metrics;

import io.pier.share.ShareEvents;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import java.util.Locale;

/**
 * The counters of one share-partition, resolved once so that an event costs one increment.
 * Called on the share-partition's shard; the data points themselves are thread-safe.
 */
final class SharePartitionMetrics implements ShareEvents {
    private final CounterDataPoint deliveries;
    private final CounterDataPoint accepts;
    private final CounterDataPoint rejects;
    private final CounterDataPoint releases;
    private final CounterDataPoint lockExpiries;
    private final CounterDataPoint sessionReleases;
    private final CounterDataPoint[] archivedByCause = new CounterDataPoint[ArchiveCause.values().length];
    private final DistributionDataPoint acceptedCounts;
    private final DistributionDataPoint rejectedCounts;

    SharePartitionMetrics(PierMetrics m, String group, String topic, String partition) {
        deliveries = m.deliveries.labelValues(group, topic, partition);
        accepts = m.accepts.labelValues(group, topic, partition);
        rejects = m.rejects.labelValues(group, topic, partition);
        releases = m.releases.labelValues(group, topic, partition);
        lockExpiries = m.lockExpiries.labelValues(group, topic, partition);
        sessionReleases = m.sessionReleases.labelValues(group, topic, partition);
        for (ArchiveCause cause : ArchiveCause.values()) {
            archivedByCause[cause.ordinal()] = m.archived.labelValues(group, topic, partition, label(cause));
        }
        acceptedCounts = m.deliveryCounts(group, topic, partition, "accept");
        rejectedCounts = m.deliveryCounts(group, topic, partition, "reject");
    }

    static String label(ArchiveCause cause) {
        return cause.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void onAcquired(int deliveryCount) {
        deliveries.inc();
    }

    @Override
    public void onAccepted(int deliveryCount) {
        accepts.inc();
        acceptedCounts.observe(deliveryCount);
    }

    @Override
    public void onRejected(int deliveryCount) {
        rejects.inc();
        rejectedCounts.observe(deliveryCount);
    }

    @Override
    public void onReleased(int deliveryCount) {
        releases.inc();
    }

    @Override
    public void onLockExpired(int deliveryCount) {
        lockExpiries.inc();
    }

    @Override
    public void onMemberReleased(int deliveryCount) {
        sessionReleases.inc();
    }

    @Override
    public void onArchived(ArchiveCause cause, long records) {
        archivedByCause[cause.ordinal()].inc(records);
    }
}
