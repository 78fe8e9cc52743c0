package io.pier.metrics;

import com.sun.net.httpserver.HttpHandler;
import io.pier.share.ShareEvents;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The broker's metrics, in a registry of its own (so several embedded brokers in one JVM never
 * mix their figures). Three kinds of source, each safe for its thread:
 *
 * <ul>
 *   <li>share-partition counters and the delivery-count histogram, counted in plain fields by
 *       {@link SharePartitionMetrics} on the shard that owns the share-partition and handed to
 *       Prometheus by that shard's {@link ShardShareMetrics#flush} (no Prometheus call per record);
 *   <li>request latency per API, observed on whatever thread completes a response, and how long
 *       polls were answered, counted on their home shard;
 *   <li>gauges (offsets, lag, in-flight records, oldest age, log size, groups by state, committed
 *       offsets) and the rebalance counter, read by the scrape thread from immutable snapshots
 *       each shard publishes with {@link #publish} and {@link #publishGroups} every
 *       {@code pier.metrics.snapshot.interval.ms}: a scrape never touches engine state.
 * </ul>
 *
 * <p>Every metric is listed in {@code docs/operations.md}.
 */
public final class PierMetrics {
    /** A partition as a group sees it: share-partitions and consumer groups' committed offsets. */
    static final String[] GROUP_PARTITION_LABELS = {"group", "topic", "partition"};
    private static final double[] LATENCY_BUCKETS_SECONDS = {
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final AtomicReferenceArray<ShardSnapshot> published;
    private final AtomicReferenceArray<GroupSnapshot> publishedGroups;
    private final ShardShareMetrics[] shardShares;

    final Counter deliveries;
    final Counter accepts;
    final Counter rejects;
    final Counter releases;
    final Counter lockExpiries;
    final Counter sessionReleases;
    final Counter archived;
    final Counter deadLetters;
    final Counter deadLetterFailures;
    final DeliveryCountHistogram deliveryCountAtAck = new DeliveryCountHistogram();
    private final Histogram requestLatency;
    private final Counter longPollAnswers;

    /** What one shard published last. */
    private record ShardSnapshot(List<SharePartitionSnapshot> shares, List<LogSnapshot> logs) {}

    public PierMetrics(int shards) {
        published = new AtomicReferenceArray<>(shards);
        for (int i = 0; i < shards; i++) {
            published.set(i, new ShardSnapshot(List.of(), List.of()));
        }
        publishedGroups = new AtomicReferenceArray<>(shards);
        for (int i = 0; i < shards; i++) {
            publishedGroups.set(i, GroupSnapshot.NONE);
        }
        deliveries = shareCounter("pier_share_deliveries_total",
                "Records handed to consumers (each delivery of a record counts once)");
        accepts = shareCounter("pier_share_accepts_total", "Records accepted by consumers (durable)");
        rejects = shareCounter("pier_share_rejects_total", "Records rejected by consumers (durable)");
        releases = shareCounter("pier_share_releases_total",
                "Records released by consumers for redelivery (durable); archived instead at the delivery limit");
        lockExpiries = shareCounter("pier_share_lock_expiries_total",
                "Records whose acquisition lock expired before the consumer settled them");
        sessionReleases = shareCounter("pier_share_session_releases_total",
                "Records handed back because the share session of the consumer holding them ended");
        archived = Counter.builder().name("pier_share_archived_records_total")
                .help("Records archived without being accepted, by cause: rejected, delivery_limit, log_start")
                .labelNames("group", "topic", "partition", "cause")
                .withoutExemplars()
                .register(registry);
        deadLetters = shareCounter("pier_share_dead_letters_total",
                "Dead records (rejected, or at the delivery limit) whose dead letter the group's"
                        + " errors.deadletterqueue.topic.name holds (durable)");
        deadLetterFailures = shareCounter("pier_share_dead_letter_failures_total",
                "Dead records archived without a dead letter: the dead-letter topic was missing, not enabled"
                        + " for groups (errors.deadletterqueue.group.enable) or could not be written");
        registry.register(deliveryCountAtAck);
        requestLatency = Histogram.builder().name("pier_request_duration_seconds")
                .help("Time from dispatching a request to its response being ready, by API"
                        + " (long polls include their wait)")
                .labelNames("api")
                .classicOnly()
                .classicUpperBounds(LATENCY_BUCKETS_SECONDS)
                .withoutExemplars()
                .register(registry);
        longPollAnswers = Counter.builder().name("pier_long_poll_answers_total")
                .help("Fetch and ShareFetch requests that could wait (long polls), by API and by how they"
                        + " were answered: at_once, woken, max_wait, cut_short")
                .labelNames("api", "outcome")
                .withoutExemplars()
                .register(registry);
        registerShareGauges();
        registerLogGauges();
        registerGroupMetrics();
        shardShares = new ShardShareMetrics[shards];
        for (int i = 0; i < shards; i++) {
            shardShares[i] = new ShardShareMetrics(this);
        }
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    /** The share-partition metrics of shard {@code shard}: use them only on that shard. */
    public ShardShareMetrics shares(int shard) {
        return shardShares[shard];
    }

    /** Drops a share-partition's counter and histogram series (its group's state was deleted). */
    void removeShareSeries(String group, String topic, String p) {
        for (Counter c : List.of(deliveries, accepts, rejects, releases, lockExpiries, sessionReleases, deadLetters,
                deadLetterFailures)) {
            c.remove(group, topic, p);
        }
        for (ShareEvents.ArchiveCause cause : ShareEvents.ArchiveCause.values()) {
            archived.remove(group, topic, p, SharePartitionMetrics.label(cause));
        }
        for (String type : List.of("accept", "reject")) {
            deliveryCountAtAck.remove(DeliveryCountHistogram.labels(group, topic, p, type));
        }
    }

    /** A response to a request of {@code api} was ready {@code elapsedNanos} after dispatch. */
    public void onResponse(ApiKeys api, long elapsedNanos) {
        requestLatency.labelValues(api.name).observe(elapsedNanos / 1e9);
    }

    /**
     * A long poll of {@code api} was answered; {@code outcome} says how (at_once, woken, max_wait,
     * cut_short). Called from any shard.
     */
    public void onLongPollAnswer(ApiKeys api, String outcome) {
        longPollAnswers.labelValues(api.name, outcome).inc();
    }

    /** Shard {@code shard} replaces what it showed last; the lists must not change afterwards. */
    public void publish(int shard, List<SharePartitionSnapshot> shares, List<LogSnapshot> logs) {
        published.set(shard, new ShardSnapshot(List.copyOf(shares), List.copyOf(logs)));
    }

    /** Shard {@code shard} replaces what it showed last of the groups it coordinates. */
    public void publishGroups(int shard, GroupSnapshot groups) {
        publishedGroups.set(shard, groups);
    }

    /**
     * Open client connections per listener, as the connection limits count them (refused ones
     * are not counted); {@code countOn} is read by the scrape thread, so it must be thread-safe.
     */
    public void connections(List<String> listeners, ToIntFunction<String> countOn) {
        List<String> names = List.copyOf(listeners);
        GaugeWithCallback.builder().name("pier_connections")
                .help("Open client connections by listener (the count max.connections and its listener limits apply to)")
                .labelNames("listener")
                .callback(cb -> names.forEach(l -> cb.call(countOn.applyAsInt(l), l)))
                .register(registry);
    }

    /**
     * The ACL bindings this node enforces (Kafka's acls-total-count); on a gateway, those it has
     * read from the upstream so far, so the nodes agree once each has caught up.
     */
    public void aclBindings(IntSupplier count) {
        GaugeWithCallback.builder().name("pier_acl_bindings")
                .help("ACL bindings this node enforces (on a gateway: read from the upstream so far)")
                .callback(cb -> cb.call(count.getAsInt()))
                .register(registry);
    }

    /**
     * {@code queued.max.request.bytes}: the bytes of requests read and not yet answered (0 when the
     * setting is off, as nothing is counted then), and how often a connection stopped reading because
     * they reached it.
     */
    public void requestBytes(LongSupplier held, LongSupplier waits) {
        GaugeWithCallback.builder().name("pier_queued_request_bytes")
                .help("Bytes of requests read and not yet answered, all connections (bounded by"
                        + " queued.max.request.bytes; 0 when it is not set)")
                .callback(cb -> cb.call(held.getAsLong()))
                .register(registry);
        CounterWithCallback.builder().name("pier_queued_request_bytes_waits_total")
                .help("Times a connection stopped reading because queued.max.request.bytes was reached")
                .callback(cb -> cb.call(waits.getAsLong()))
                .register(registry);
    }

    /** Serves {@code /metrics} on {@code host:port} (0 picks a free port) until closed. */
    public MetricsEndpoint serve(String host, int port) throws IOException {
        return MetricsEndpoint.start(registry, host, port, null);
    }

    /**
     * Serves {@code /metrics} on {@code host:port} (0 picks a free port), and every other path
     * with {@code pages} (the web console), until closed.
     */
    public MetricsEndpoint serve(String host, int port, HttpHandler pages) throws IOException {
        return MetricsEndpoint.start(registry, host, port, pages);
    }

    /** Every share-partition the shards published last; any thread. */
    public List<SharePartitionSnapshot> sharePartitions() {
        List<SharePartitionSnapshot> all = new ArrayList<>();
        forEachShare(all::add);
        return all;
    }

    /** Every partition log the shards published last; any thread. */
    public List<LogSnapshot> logs() {
        List<LogSnapshot> all = new ArrayList<>();
        forEachLog(all::add);
        return all;
    }

    /** What each shard published last of the groups it coordinates; any thread. */
    public List<GroupSnapshot> groups() {
        List<GroupSnapshot> all = new ArrayList<>();
        forEachGroupSnapshot(all::add);
        return all;
    }

    /** Requests answered since the start, by API name (as {@code pier_request_duration_seconds} counts them). */
    public Map<String, Long> requestCounts() {
        Map<String, Long> counts = new TreeMap<>();
        for (HistogramSnapshot.HistogramDataPointSnapshot p : requestLatency.collect().getDataPoints()) {
            counts.merge(p.getLabels().get("api"), p.getCount(), Long::sum);
        }
        return counts;
    }

    private Counter shareCounter(String name, String help) {
        return Counter.builder().name(name).help(help).labelNames(GROUP_PARTITION_LABELS).withoutExemplars().register(registry);
    }

    private void forEachShare(Consumer<SharePartitionSnapshot> action) {
        for (int i = 0; i < published.length(); i++) {
            published.get(i).shares().forEach(action);
        }
    }

    private void forEachLog(Consumer<LogSnapshot> action) {
        for (int i = 0; i < published.length(); i++) {
            published.get(i).logs().forEach(action);
        }
    }

    private void shareGauge(String name, String help, ToDoubleFunction<SharePartitionSnapshot> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames(GROUP_PARTITION_LABELS)
                .callback(cb -> forEachShare(s -> cb.call(value.applyAsDouble(s),
                        s.group(), s.topic(), String.valueOf(s.partition()))))
                .register(registry);
    }

    private void registerShareGauges() {
        shareGauge("pier_share_start_offset", "Share-partition start offset (SPSO): first offset not settled for good",
                SharePartitionSnapshot::startOffset);
        shareGauge("pier_share_end_offset", "Share-partition end offset (SPEO): last offset in the in-flight window",
                SharePartitionSnapshot::endOffset);
        shareGauge("pier_share_lag", "Records not yet settled for good: high watermark - start offset"
                + " - records accepted or archived in flight (KIP-1226)", SharePartitionSnapshot::lag);
        shareGauge("pier_share_backoff_records", "AVAILABLE records waiting for their release backoff to end"
                + " (pier.share.release.backoff.*) before they may be delivered again", SharePartitionSnapshot::inBackoff);
        shareGauge("pier_share_blocked_keys", "Keys with a record waiting behind an earlier record of theirs"
                + " (groups with pier.share.ordering=key)", SharePartitionSnapshot::blockedKeys);
        shareGauge("pier_share_oldest_blocked_age_seconds", "How long the oldest record waiting behind an earlier"
                + " record of its key has been in the in-flight window; 0 if none", s -> s.oldestBlockedAgeMs() / 1000.0);
        shareGauge("pier_share_oldest_unacknowledged_age_seconds",
                "How long the oldest AVAILABLE or ACQUIRED record has been in the in-flight window; 0 if none",
                s -> s.oldestUnacknowledgedAgeMs() / 1000.0);
        GaugeWithCallback.builder().name("pier_share_in_flight_records")
                .help("Records in the in-flight window by state: available, acquired, acknowledged, archiving"
                        + " (waiting for their dead letter), archived")
                .labelNames("group", "topic", "partition", "state")
                .callback(cb -> forEachShare(s -> {
                    String p = String.valueOf(s.partition());
                    cb.call(s.available(), s.group(), s.topic(), p, "available");
                    cb.call(s.acquired(), s.group(), s.topic(), p, "acquired");
                    cb.call(s.acknowledged(), s.group(), s.topic(), p, "acknowledged");
                    cb.call(s.archiving(), s.group(), s.topic(), p, "archiving");
                    cb.call(s.archived(), s.group(), s.topic(), p, "archived");
                }))
                .register(registry);
        GaugeWithCallback.builder().name("pier_share_member_acquired_records")
                .help("Records a member holds (ACQUIRED), over every partition of its share group")
                .labelNames("group", "member")
                .callback(cb -> {
                    Map<List<String>, Integer> byMember = new HashMap<>();
                    forEachShare(s -> s.acquiredByMember().forEach((member, n) ->
                            byMember.merge(List.of(s.group(), member), n, Integer::sum)));
                    byMember.forEach((k, n) -> cb.call(n, k.get(0), k.get(1)));
                })
                .register(registry);
    }

    private void logGauge(String name, String help, ToDoubleFunction<LogSnapshot> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("topic", "partition")
                .callback(cb -> forEachLog(l -> cb.call(value.applyAsDouble(l), l.topic(),
                        String.valueOf(l.partition()))))
                .register(registry);
    }

    private void registerLogGauges() {
        logGauge("pier_log_size_bytes", "Bytes of the partition's log segments on disk", LogSnapshot::sizeBytes);
        logGauge("pier_log_start_offset", "First offset still in the partition log", LogSnapshot::startOffset);
        logGauge("pier_log_end_offset", "Offset the next appended record gets", LogSnapshot::endOffset);
        logGauge("pier_log_high_watermark", "Durable end of the partition log: consumers read below it",
                LogSnapshot::highWatermark);
    }

    private void forEachGroupSnapshot(Consumer<GroupSnapshot> action) {
        for (int i = 0; i < publishedGroups.length(); i++) {
            action.accept(publishedGroups.get(i));
        }
    }

    private void registerGroupMetrics() {
        GaugeWithCallback.builder().name("pier_groups")
                .help("Groups by type (classic, consumer, share) and state, with Kafka's state names")
                .labelNames("type", "state")
                .callback(cb -> {
                    Map<GroupSnapshot.Kind, Integer> counts = new LinkedHashMap<>();
                    GroupSnapshot.KINDS.forEach(k -> counts.put(k, 0));
                    forEachGroupSnapshot(g -> g.groups().forEach((k, n) -> counts.merge(k, n, Integer::sum)));
                    counts.forEach((k, n) -> cb.call(n, k.type(), k.state()));
                })
                .register(registry);
        CounterWithCallback.builder().name("pier_group_rebalances_total")
                .help("Rebalances since the broker started, by group type: generations started (classic),"
                        + " group epoch bumps (consumer)")
                .labelNames("type")
                .callback(cb -> {
                    long classic = 0;
                    long consumer = 0;
                    for (int i = 0; i < publishedGroups.length(); i++) {
                        classic += publishedGroups.get(i).classicRebalances();
                        consumer += publishedGroups.get(i).consumerRebalances();
                    }
                    cb.call(classic, GroupSnapshot.CLASSIC);
                    cb.call(consumer, GroupSnapshot.CONSUMER);
                })
                .register(registry);
        GaugeWithCallback.builder().name("pier_consumer_group_committed_offset")
                .help("Committed offset of a consumer group (either protocol) on a partition")
                .labelNames(GROUP_PARTITION_LABELS)
                .callback(cb -> forEachGroupSnapshot(g -> g.committed().forEach(c ->
                        cb.call(c.offset(), c.group(), c.topic(), String.valueOf(c.partition())))))
                .register(registry);
        GaugeWithCallback.builder().name("pier_consumer_group_lag")
                .help("Records a consumer group has yet to consume on a partition: high watermark - committed"
                        + " offset, never below 0")
                .labelNames(GROUP_PARTITION_LABELS)
                .callback(cb -> {
                    // Joined at scrape time: a group's offsets are snapshot on the group's shard, a
                    // partition's high watermark on the partition's, usually another one.
                    Map<TopicPartition, Long> highWatermarks = new HashMap<>();
                    forEachLog(l -> highWatermarks.put(new TopicPartition(l.topic(), l.partition()), l.highWatermark()));
                    forEachGroupSnapshot(g -> g.committed().forEach(c -> {
                        Long hw = highWatermarks.get(new TopicPartition(c.topic(), c.partition()));
                        if (hw != null) {
                            cb.call(Math.max(0, hw - c.offset()), c.group(), c.topic(), String.valueOf(c.partition()));
                        }
                    }));
                })
                .register(registry);
    }
}
