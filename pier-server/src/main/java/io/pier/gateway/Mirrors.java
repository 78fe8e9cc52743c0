package io.pier.gateway;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.pier.group.AutoOffsetReset;
import io.pier.service.Logs;
import io.pier.service.Partition;
import io.pier.service.ShareLogSource;

/**
 * The gateway's share-partitions read local logs that mirror upstream partitions: record batches
 * fetched from the upstream leader and appended unchanged, at their upstream offsets
 * ({@code PartitionLog.appendMirrored}), so the share engine, its reads in place and its long polls
 * work as on a broker's own log. A mirror is a cache: it starts where the first share-partition
 * needs it ({@link #cover}), goes back when one needs older records, and is fetched again after
 * a restart; what is durable is the upstream's log and the share state.
 *
 * <pre>
 *   share-partition loads ──cover(start)──▶ shard: restart the mirror at start if it is new or
 *                                                 starts later ──▶ upstream thread: register
 *   upstream thread: one Fetch per leader for the mirrors not in a fetch (long poll 200 ms)
 *        answer ──▶ each partition's shard: append if the log still ends where the fetch began
 *               ──▶ upstream thread: the mirror fetches again from its new end
 * </pre>
 *
 * <p><b>Threads.</b> The fetch state is owned by the upstream thread ({@link Upstream#execute});
 * shards reach it only by queuing a task there, and it reaches a log only through its shard
 * ({@link Logs#appendMirrored}). An append checks on the shard that the log still ends where the
 * fetch began, so a fetch answer that crossed a restart of its mirror is dropped, never appended
 * at the wrong place.
 */
final class Mirrors implements ShareLogSource {
    private static final Logger LOG = LoggerFactory.getLogger(Mirrors.class);
    private static final int MAX_WAIT_MS = 200;
    private static final int MAX_BYTES = 8 * 1024 * 1024;
    private static final int PARTITION_MAX_BYTES = 1024 * 1024;
    private static final long RETRY_BACKOFF_MS = 100;

    /** One mirrored partition's fetch state; upstream thread only. */
    private static final class Mirror {
        final Partition partition;
        long fetchOffset;
        boolean inFetch;
        boolean waiting;
        /**
         * Where the log was restarted while a fetch was in flight, or -1: the fetch then ends
         * there, whatever its answer (an empty long poll would otherwise resume from the offset it
         * was sent at, past the restarted log's end, and wait there for ever).
         */
        long restartedAt = -1;

        Mirror(Partition partition, long fetchOffset) {
            this.partition = partition;
            this.fetchOffset = fetchOffset;
        }
    }

    private final Upstream upstream;
    private final Logs logs;
    private final GroupConfigSync settings;
    /** Upstream thread only. */
    private final Map<TopicPartition, Mirror> mirrors = new HashMap<>();
    /** Which partitions have a mirror this run: read on shards, so a first use starts afresh. */
    private final Set<TopicPartition> started = ConcurrentHashMap.newKeySet();

    Mirrors(Upstream upstream, Logs logs, GroupConfigSync settings) {
        this.upstream = upstream;
        this.logs = logs;
        this.settings = settings;
    }

    /** The upstream's offset for the group's reset, once this node has every setting written so far. */
    @Override
    public CompletableFuture<Long> initialStartOffset(Partition partition, Supplier<AutoOffsetReset> groupReset,
            long nowWallMs) {
        return settings.caughtUp().thenCompose(v -> {
            AutoOffsetReset reset = groupReset.get();
            long timestamp = switch (reset.strategy()) {
                case EARLIEST -> ListOffsetsRequest.EARLIEST_TIMESTAMP;
                case BY_DURATION -> nowWallMs - reset.duration().toMillis();
                default -> ListOffsetsRequest.LATEST_TIMESTAMP;
            };
            return upstream.listOffset(partition.topicPartition(), timestamp);
        });
    }

    @Override
    public boolean cachesRecords() {
        return true;
    }

    @Override
    public CompletableFuture<Long> endOffset(Partition partition) {
        return upstream.listOffset(partition.topicPartition(), ListOffsetsRequest.LATEST_TIMESTAMP);
    }

    /**
     * On the partition's shard: a mirror seen for the first time since start, or one that starts
     * after {@code start}, restarts empty at {@code start} (what the local log held may be stale);
     * then the fetcher is told where it ends.
     */
    @Override
    public CompletableFuture<Void> cover(Partition partition, long start) {
        long from;
        try {
            from = logs.coverMirror(partition, start, started.add(partition.topicPartition()));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        upstream.execute(() -> register(partition, from));
        return CompletableFuture.completedFuture(null);
    }

    private void register(Partition partition, long from) {
        LOG.debug("Mirror of {} fetches from offset {}", partition.topicPartition(), from);
        Mirror m = mirrors.get(partition.topicPartition());
        if (m == null || m.partition != partition) {
            m = new Mirror(partition, from);
            mirrors.put(partition.topicPartition(), m);
        } else if (!m.inFetch) {
            m.fetchOffset = from;
        } else {
            m.restartedAt = from;
        }
        // A mirror in a fetch learns its end when that fetch's append is done (or dropped).
        fetchAll();
    }

    /** Sends one Fetch per upstream leader for the mirrors that are in none. Upstream thread. */
    private void fetchAll() {
        UpstreamView view = upstream.view();
        Map<Node, List<Mirror>> byLeader = new LinkedHashMap<>();
        boolean unknown = false;
        for (Mirror m : mirrors.values()) {
            if (m.inFetch || m.waiting) {
                continue;
            }
            if (m.partition.isDeleted()) {
                continue;
            }
            Node leader = view.leader(m.partition.topicPartition());
            if (leader == null) {
                unknown = true;
                continue;
            }
            byLeader.computeIfAbsent(leader, n -> new ArrayList<>()).add(m);
        }
        if (unknown) {
            var unused = upstream.refresh().whenComplete((v, t) -> upstream.schedule(RETRY_BACKOFF_MS, this::fetchAll));
        }
        byLeader.forEach(this::fetch);
    }

    private void fetch(Node leader, List<Mirror> batch) {
        Map<TopicPartition, Mirror> sent = new HashMap<>();
        Map<TopicPartition, Long> offsets = new HashMap<>();
        for (Mirror m : batch) {
            m.inFetch = true;
            sent.put(m.partition.topicPartition(), m);
            offsets.put(m.partition.topicPartition(), m.fetchOffset);
        }
        var unused = upstream.send(Upstream.lane(leader, Upstream.MIRROR_LANE),
                        Messages.builder(ApiKeys.FETCH, (short) 4, v -> request(batch, v)))
                .whenComplete((answer, failure) -> upstream.execute(() -> {
                    if (failure != null) {
                        LOG.debug("Mirror fetch from upstream node {} failed: {}", leader, failure.toString());
                        sent.values().forEach(m -> retryLater(m));
                        return;
                    }
                    onAnswer((FetchResponse) answer, sent, offsets);
                }));
    }

    private static FetchRequestData request(List<Mirror> batch, int version) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(MAX_WAIT_MS).setMinBytes(1)
                .setMaxBytes(MAX_BYTES).setIsolationLevel(IsolationLevel.READ_UNCOMMITTED.id())
                .setSessionId(FetchMetadata.INVALID_SESSION_ID).setSessionEpoch(FetchMetadata.FINAL_EPOCH);
        Map<String, FetchRequestData.FetchTopic> topics = new LinkedHashMap<>();
        for (Mirror m : batch) {
            TopicPartition tp = m.partition.topicPartition();
            FetchRequestData.FetchTopic topic = topics.computeIfAbsent(tp.topic(), name -> {
                FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
                return version >= 13 ? t.setTopicId(m.partition.topicId()) : t.setTopic(name);
            });
            topic.partitions().add(new FetchRequestData.FetchPartition().setPartition(tp.partition())
                    .setFetchOffset(m.fetchOffset).setPartitionMaxBytes(PARTITION_MAX_BYTES));
        }
        data.setTopics(new ArrayList<>(topics.values()));
        return data;
    }

    /** Upstream thread: hands each partition's records to its shard, or reacts to its error. */
    private void onAnswer(FetchResponse answer, Map<TopicPartition, Mirror> sent, Map<TopicPartition, Long> offsets) {
        Map<Uuid, String> names = upstream.view().names();
        for (FetchResponseData.FetchableTopicResponse topic : answer.data().responses()) {
            String name = topic.topic() != null && !topic.topic().isEmpty() ? topic.topic() : names.get(topic.topicId());
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(name, p.partitionIndex());
                Mirror m = sent.remove(tp);
                if (m == null) {
                    continue;
                }
                Errors error = Errors.forCode(p.errorCode());
                if (error == Errors.NONE) {
                    MemoryRecords records = (MemoryRecords) FetchResponse.recordsOrFail(p);
                    if (records.sizeInBytes() == 0) {
                        fetched(m, m.fetchOffset);
                        continue;
                    }
                    var unused = logs.appendMirrored(m.partition, offsets.get(tp), records).whenComplete((end, t) ->
                            upstream.execute(() -> {
                                if (t != null) {
                                    LOG.warn("Appending to the mirror of {} failed: {}", tp, t.toString());
                                    retryLater(m);
                                } else {
                                    fetched(m, end);
                                }
                            }));
                } else if (error == Errors.OFFSET_OUT_OF_RANGE) {
                    restartAtUpstreamStart(m, offsets.get(tp));
                } else {
                    LOG.debug("Mirror fetch of {} from offset {}: {}", tp, offsets.get(tp), error);
                    if (error == Errors.NOT_LEADER_OR_FOLLOWER || error == Errors.UNKNOWN_TOPIC_OR_PARTITION
                            || error == Errors.UNKNOWN_TOPIC_ID || error == Errors.FENCED_LEADER_EPOCH) {
                        var unused = upstream.refresh();
                    }
                    retryLater(m);
                }
            }
        }
        sent.values().forEach(this::retryLater); // partitions the answer left out
    }

    /**
     * The upstream no longer holds the offset the mirror needs (its retention or a DeleteRecords
     * passed it): the mirror restarts at the upstream's start, and the share-partitions reading it
     * move their start there, as on a broker whose own log start moved.
     */
    private void restartAtUpstreamStart(Mirror m, long fetchedFrom) {
        TopicPartition tp = m.partition.topicPartition();
        var unused = upstream.listOffset(tp, ListOffsetsRequest.EARLIEST_TIMESTAMP)
                .thenCompose(start -> start > fetchedFrom
                        ? logs.restartMirror(m.partition, start).thenApply(v -> start)
                        : CompletableFuture.completedFuture(fetchedFrom))
                .whenComplete((start, t) -> upstream.execute(() -> {
                    if (t != null) {
                        retryLater(m);
                    } else {
                        LOG.info("The upstream no longer holds offset {} of {}: its mirror restarts at {}", fetchedFrom,
                                tp, start);
                        fetched(m, start);
                    }
                }));
    }

    /** Upstream thread: the mirror's fetch is done; it fetches again from {@code end}. */
    private void fetched(Mirror m, long end) {
        m.inFetch = false;
        m.fetchOffset = m.restartedAt >= 0 ? m.restartedAt : end;
        m.restartedAt = -1;
        fetchAll();
    }

    private void retryLater(Mirror m) {
        m.inFetch = false;
        if (m.restartedAt >= 0) {
            m.fetchOffset = m.restartedAt;
            m.restartedAt = -1;
        }
        m.waiting = true;
        upstream.schedule(RETRY_BACKOFF_MS, () -> {
            m.waiting = false;
            fetchAll();
        });
    }
}
