package io.pier.metrics;

import io.pier.metrics.DeliveryCountHistogram.Totals;
import io.pier.share.ShareEvents;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The counters of one share-partition. An event costs a plain field increment (no Prometheus
 * call, no atomic): every method, {@link #flush} included, runs on the shard that owns the
 * share-partition, the single writer of the pending counts. {@link #flush} adds them to the
 * Prometheus counters and publishes the delivery-count histogram's new totals, off the per-record
 * path (the shard's metrics step calls it before it publishes its gauge snapshot).
 */
final class SharePartitionMetrics implements ShareEvents {
    private static final int CAUSES = ArchiveCause.values().length;

    private final CounterDataPoint deliveriesPoint;
    private final CounterDataPoint acceptsPoint;
    private final CounterDataPoint rejectsPoint;
    private final CounterDataPoint releasesPoint;
    private final CounterDataPoint lockExpiriesPoint;
    private final CounterDataPoint sessionReleasesPoint;
    private final CounterDataPoint deadLettersPoint;
    private final CounterDataPoint deadLetterFailuresPoint;
    private final CounterDataPoint[] archivedPoints = new CounterDataPoint[CAUSES];
    private final DeliveryCounts acceptedCounts;
    private final DeliveryCounts rejectedCounts;

    // Pending since the last flush; shard thread only.
    private long deliveries;
    private long accepts;
    private long rejects;
    private long releases;
    private long lockExpiries;
    private long sessionReleases;
    private final long[] archived = new long[CAUSES];
    private long deadLetters;
    private long deadLetterFailures;
    /** Forgotten: nothing is published any more, whatever is still told. */
    private boolean discarded;
    /** Everything flushed so far, for the web console; replaced (never changed) by a flush. */
    private ShareCounts totals = ShareCounts.NONE;

    SharePartitionMetrics(PierMetrics m, DeliveryCountHistogram histogram, String group, String topic,
            String partition, long createdMillis) {
        deliveriesPoint = m.deliveries.labelValues(group, topic, partition);
        acceptsPoint = m.accepts.labelValues(group, topic, partition);
        rejectsPoint = m.rejects.labelValues(group, topic, partition);
        releasesPoint = m.releases.labelValues(group, topic, partition);
        lockExpiriesPoint = m.lockExpiries.labelValues(group, topic, partition);
        sessionReleasesPoint = m.sessionReleases.labelValues(group, topic, partition);
        deadLettersPoint = m.deadLetters.labelValues(group, topic, partition);
        deadLetterFailuresPoint = m.deadLetterFailures.labelValues(group, topic, partition);
        for (ArchiveCause cause : ArchiveCause.values()) {
            archivedPoints[cause.ordinal()] = m.archived.labelValues(group, topic, partition, label(cause));
        }
        acceptedCounts = new DeliveryCounts(histogram,
                DeliveryCountHistogram.labels(group, topic, partition, "accept"), createdMillis);
        rejectedCounts = new DeliveryCounts(histogram,
                DeliveryCountHistogram.labels(group, topic, partition, "reject"), createdMillis);
    }

    static String label(ArchiveCause cause) {
        return cause.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void onAcquired(int deliveryCount) {
        deliveries++;
    }

    @Override
    public void onAccepted(int deliveryCount) {
        accepts++;
        acceptedCounts.add(deliveryCount);
    }

    @Override
    public void onRejected(int deliveryCount) {
        rejects++;
        rejectedCounts.add(deliveryCount);
    }

    @Override
    public void onReleased(int deliveryCount) {
        releases++;
    }

    @Override
    public void onLockExpired(int deliveryCount) {
        lockExpiries++;
    }

    @Override
    public void onMemberReleased(int deliveryCount) {
        sessionReleases++;
    }

    @Override
    public void onArchived(ArchiveCause cause, long records) {
        archived[cause.ordinal()] += records;
    }

    @Override
    public void onDeadLetters(long written, long failed) {
        deadLetters += written;
        deadLetterFailures += failed;
    }

    /** Shard thread only: makes what was told since the last flush visible to scrapes. */
    void flush() {
        if (discarded) {
            return;
        }
        ShareCounts next = pending() ? plusPending() : null;
        deliveries = add(deliveriesPoint, deliveries);
        accepts = add(acceptsPoint, accepts);
        rejects = add(rejectsPoint, rejects);
        releases = add(releasesPoint, releases);
        lockExpiries = add(lockExpiriesPoint, lockExpiries);
        sessionReleases = add(sessionReleasesPoint, sessionReleases);
        deadLetters = add(deadLettersPoint, deadLetters);
        deadLetterFailures = add(deadLetterFailuresPoint, deadLetterFailures);
        for (int i = 0; i < CAUSES; i++) {
            archived[i] = add(archivedPoints[i], archived[i]);
        }
        acceptedCounts.flush();
        rejectedCounts.flush();
        if (next != null) {
            totals = new ShareCounts(next.deliveries(), next.accepts(), next.rejects(), next.releases(),
                    next.lockExpiries(), next.sessionReleases(), next.archivedRejected(), next.archivedDeliveryLimit(),
                    next.archivedLogStart(), next.deadLetters(), next.deadLetterFailures(), acceptedCounts.buckets(),
                    rejectedCounts.buckets());
        }
    }

    /** Shard thread only: what {@link #flush} has published so far. */
    ShareCounts totals() {
        return totals;
    }

    private boolean pending() {
        long archivedPending = 0;
        for (long a : archived) {
            archivedPending |= a;
        }
        return (deliveries | accepts | rejects | releases | lockExpiries | sessionReleases | deadLetters
                | deadLetterFailures | archivedPending) != 0;
    }

    /** The totals plus what is pending, delivery-count buckets aside (the histograms' flush adds those). */
    private ShareCounts plusPending() {
        ShareCounts t = totals;
        return new ShareCounts(t.deliveries() + deliveries, t.accepts() + accepts, t.rejects() + rejects,
                t.releases() + releases, t.lockExpiries() + lockExpiries, t.sessionReleases() + sessionReleases,
                t.archivedRejected() + archived[ArchiveCause.REJECTED.ordinal()],
                t.archivedDeliveryLimit() + archived[ArchiveCause.DELIVERY_LIMIT.ordinal()],
                t.archivedLogStart() + archived[ArchiveCause.LOG_START.ordinal()],
                t.deadLetters() + deadLetters, t.deadLetterFailures() + deadLetterFailures,
                t.acceptedByDeliveryCount(), t.rejectedByDeliveryCount());
    }

    /**
     * Shard thread only: the share-partition's state was deleted; what is pending is dropped with
     * its series, and nothing told from now on (a late commit) is ever published.
     */
    void discard() {
        discarded = true;
    }

    /** Adds {@code pending} to {@code point}; returns what is pending afterwards (nothing). */
    private static long add(CounterDataPoint point, long pending) {
        if (pending != 0) {
            point.inc(pending);
        }
        return 0;
    }

    /** One series of the delivery-count histogram: pending counts and the totals last published. */
    private static final class DeliveryCounts {
        private final DeliveryCountHistogram histogram;
        private final Labels labels;
        private final long[] pending = new long[DeliveryCountHistogram.BUCKETS];
        private long pendingRecords;
        private long pendingSum;
        private Totals published;

        DeliveryCounts(DeliveryCountHistogram histogram, Labels labels, long createdMillis) {
            this.histogram = histogram;
            this.labels = labels;
            this.published = Totals.empty(createdMillis);
            // Shown (all zero) from the start, as a Prometheus histogram's labelValues() did.
            histogram.publish(labels, published);
        }

        void add(int deliveryCount) {
            pending[DeliveryCountHistogram.bucket(deliveryCount)]++;
            pendingRecords++;
            pendingSum += deliveryCount;
        }

        /** The published totals per bucket. */
        List<Long> buckets() {
            List<Long> out = new ArrayList<>(DeliveryCountHistogram.BUCKETS);
            for (long c : published.counts()) {
                out.add(c);
            }
            return out;
        }

        void flush() {
            if (pendingRecords == 0) {
                return;
            }
            published = published.plus(pending, pendingSum);
            histogram.publish(labels, published);
            Arrays.fill(pending, 0);
            pendingRecords = 0;
            pendingSum = 0;
        }
    }
}
