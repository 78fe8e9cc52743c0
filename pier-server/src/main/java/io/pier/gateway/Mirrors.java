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
 *   upstream thread: per leader, one Fetch at a time for all its mirrors (long poll 200 ms)
 *        answer ──▶ each partition's records to its shard (append if the log still ends where
 *               the fetch began) ──▶ the leader's next Fetch at once, from past those records
 * </pre>
 *
 * <p><b>One Fetch per leader.</b> An upstream broker answers one connection's requests one at a
 * time, so a long poll for mirrors at their end (idle topics) held every other mirror's Fetch
 * behind it: each leader gets one Fetch naming all its mirrors, which comes back as soon as any
 * of them has records. The next goes out as soon as the answer is read, from the end of the
 * records it brought, while the shards append them: at most {@link #MAX_PENDING_APPENDS} appends
 * of a mirror wait at once, beyond which it sits out a Fetch.
 *
 * <p><b>Threads.</b> The fetch state is owned by the upstream thread ({@link Upstream#execute});
 * shards reach it only by queuing a task there, and it reaches a log only through its shard
 * ({@link Logs#appendMirrored}). An append checks on the shard that the log still ends where the
 * fetch began, so records that crossed a restart of their mirror are dropped, never appended at
 * the wrong place; each restart starts a new generation of the mirror, and what an older
 * generation fetched or appended is ignored.
 */
final class Mirrors implements ShareLogSource {
    private static final Logger LOG = LoggerFactory.getLogger(Mirrors.class);
    private static final int MAX_WAIT_MS = 200;
    private static final int MAX_BYTES = 8 * 1024 * 1024;
    private static final int PARTITION_MAX_BYTES = 1024 * 1024;
    private static final long RETRY_BACKOFF_MS = 100;
    /** Appends of one mirror that may wait on its shard while its next Fetch goes out. */
    static final int MAX_PENDING_APPENDS = 2;

    /** One mirrored partition's fetch state; upstream thread only. */
    private static final class Mirror {
        final Partition partition;
        /** Where the next Fetch starts: past the records fetched, appended or on their way. */
        long fetchOffset;
        /** Bumped by every restart of the log: a Fetch or append of an older generation is stale. */
        int generation;
        boolean inFetch;
        /** Backing off after an error, or finding the upstream's new start. */
        boolean waiting;
        int pendingAppends;

        Mirror(Partition partition, long fetchOffset) {
            this.partition = partition;
            this.fetchOffset = fetchOffset;
        }

        /** The log now ends at {@code end} and is fetched from there; older fetches and appends are stale. */
        void restartAt(long end) {
            fetchOffset = end;
            generation++;
        }
    }

    private final Upstream upstream;
    private final Logs logs;
    private final GroupConfigSync settings;
    /** Upstream thread only. */
    private final Map<TopicPartition, Mirror> mirrors = new HashMap<>();
    /** Upstream thread only: the leaders with a mirror Fetch in flight. */
    private final Set<Node> fetching = new java.util.HashSet<>();
    /** Upstream thread only: where the next Fetch's list of partitions begins. */
    private int rotation;
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
    public CompletableFuture<Void> groupSettingsApplied() {
        return settings.caughtUp();
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
     * then the fetcher is told.
     */
    @Override
    public CompletableFuture<Void> cover(Partition partition, long start) {
        Logs.MirrorCover covered;
        try {
            covered = logs.coverMirror(partition, start, started.add(partition.topicPartition()));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        upstream.execute(() -> register(partition, covered.end(), covered.restarted()));
        return CompletableFuture.completedFuture(null);
    }

    private void register(Partition partition, long end, boolean restarted) {
        Mirror m = mirrors.get(partition.topicPartition());
        if (m == null || m.partition != partition) {
            LOG.debug("Mirror of {} fetches from offset {}", partition.topicPartition(), end);
            mirrors.put(partition.topicPartition(), new Mirror(partition, end));
        } else if (restarted) {
            LOG.debug("Mirror of {} restarts at offset {}", partition.topicPartition(), end);
            m.restartAt(end);
        }
        fetchAll();
    }

    /** Sends a Fetch to each upstream leader that has none in flight, for its mirrors that may fetch. Upstream thread. */
    private void fetchAll() {
        UpstreamView view = upstream.view();
        Map<Node, List<Mirror>> byLeader = new LinkedHashMap<>();
        boolean unknown = false;
        for (Mirror m : mirrors.values()) {
            if (m.inFetch || m.waiting || m.pendingAppends >= MAX_PENDING_APPENDS || m.partition.isDeleted()) {
                continue;
            }
            Node leader = view.leader(m.partition.topicPartition());
            if (leader == null) {
                unknown = true;
                continue;
            }
            if (!fetching.contains(leader)) {
                byLeader.computeIfAbsent(leader, n -> new ArrayList<>()).add(m);
            }
        }
        if (unknown) {
            var unused = upstream.refresh().whenComplete((v, t) -> upstream.schedule(RETRY_BACKOFF_MS, this::fetchAll));
        }
        byLeader.forEach(this::fetch);
    }

    /** What a Fetch asked of one mirror: from where, in which generation. */
    private record Asked(Mirror mirror, long from, int generation) {}

    private void fetch(Node leader, List<Mirror> batch) {
        // A leader fills a Fetch's MAX_BYTES in request order: the order rotates, so no mirror
        // waits behind busier ones for good.
        java.util.Collections.rotate(batch, -Math.floorMod(rotation++, batch.size()));
        Map<TopicPartition, Asked> sent = new LinkedHashMap<>();
        for (Mirror m : batch) {
            m.inFetch = true;
            sent.put(m.partition.topicPartition(), new Asked(m, m.fetchOffset, m.generation));
        }
        fetching.add(leader);
        var unused = upstream.send(Upstream.lane(leader, Upstream.MIRROR_LANE),
                        Messages.builder(ApiKeys.FETCH, (short) 4, v -> request(sent.values(), v)))
                .whenComplete((answer, failure) -> upstream.execute(() -> {
                    fetching.remove(leader);
                    if (failure != null) {
                        LOG.debug("Mirror fetch from upstream node {} failed: {}", leader, failure.toString());
                        sent.values().forEach(a -> retryLater(a.mirror()));
                    } else {
                        onAnswer((FetchResponse) answer, sent);
                    }
                    fetchAll();
                }));
    }

    private static FetchRequestData request(java.util.Collection<Asked> batch, int version) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(MAX_WAIT_MS).setMinBytes(1)
                .setMaxBytes(MAX_BYTES).setIsolationLevel(IsolationLevel.READ_UNCOMMITTED.id())
                .setSessionId(FetchMetadata.INVALID_SESSION_ID).setSessionEpoch(FetchMetadata.FINAL_EPOCH);
        Map<String, FetchRequestData.FetchTopic> topics = new LinkedHashMap<>();
        for (Asked a : batch) {
            Partition partition = a.mirror().partition;
            TopicPartition tp = partition.topicPartition();
            FetchRequestData.FetchTopic topic = topics.computeIfAbsent(tp.topic(), name -> {
                FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
                return version >= 13 ? t.setTopicId(partition.topicId()) : t.setTopic(name);
            });
            topic.partitions().add(new FetchRequestData.FetchPartition().setPartition(tp.partition())
                    .setFetchOffset(a.from()).setPartitionMaxBytes(PARTITION_MAX_BYTES));
        }
        data.setTopics(new ArrayList<>(topics.values()));
        return data;
    }

    /** Upstream thread: hands each partition's records to its shard, or reacts to its error. */
    private void onAnswer(FetchResponse answer, Map<TopicPartition, Asked> sent) {
        Map<Uuid, String> names = upstream.view().names();
        for (FetchResponseData.FetchableTopicResponse topic : answer.data().responses()) {
            String name = topic.topic() != null && !topic.topic().isEmpty() ? topic.topic() : names.get(topic.topicId());
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                Asked asked = sent.remove(new TopicPartition(name, p.partitionIndex()));
                if (asked != null) {
                    onPartition(asked, p);
                }
            }
        }
        sent.values().forEach(a -> retryLater(a.mirror())); // partitions the answer left out
    }

    private void onPartition(Asked asked, FetchResponseData.PartitionData p) {
        Mirror m = asked.mirror();
        m.inFetch = false;
        if (asked.generation() != m.generation) {
            return; // the log restarted meanwhile: these records were fetched for the old one
        }
        TopicPartition tp = m.partition.topicPartition();
        Errors error = Errors.forCode(p.errorCode());
        if (error == Errors.NONE) {
            MemoryRecords records = (MemoryRecords) FetchResponse.recordsOrFail(p);
            long next = asked.from();
            for (var batch : records.batches()) {
                next = Math.max(next, batch.nextOffset());
            }
            if (next > asked.from()) {
                append(m, asked, records, next);
            }
        } else if (error == Errors.OFFSET_OUT_OF_RANGE) {
            restartAtUpstreamStart(m, asked.from());
        } else {
            LOG.debug("Mirror fetch of {} from offset {}: {}", tp, asked.from(), error);
            if (error == Errors.NOT_LEADER_OR_FOLLOWER || error == Errors.UNKNOWN_TOPIC_OR_PARTITION
                    || error == Errors.UNKNOWN_TOPIC_ID || error == Errors.FENCED_LEADER_EPOCH) {
                var unused = upstream.refresh();
            }
            retryLater(m);
        }
    }

    /**
     * Appends what a Fetch brought on the partition's shard, and fetches on from {@code next}
     * meanwhile. An append that finds the log ending elsewhere (it crossed a restart, or one
     * before it failed) leaves the log as it is; the mirror then starts over where the log ends.
     */
    private void append(Mirror m, Asked asked, MemoryRecords records, long next) {
        TopicPartition tp = m.partition.topicPartition();
        m.fetchOffset = next;
        m.pendingAppends++;
        var unused = logs.appendMirrored(m.partition, asked.from(), records).whenComplete((end, t) ->
                upstream.execute(() -> {
                    m.pendingAppends--;
                    if (asked.generation() != m.generation) {
                        fetchAll();
                        return; // stale: the mirror restarted after this was fetched
                    }
                    if (t != null) {
                        LOG.warn("Appending to the mirror of {} failed: {}", tp, t.toString());
                        m.restartAt(asked.from()); // the log still ends where this append began
                        retryLater(m);
                        return;
                    }
                    // Short of next: dropped (the log ends elsewhere). Past it is no news: the
                    // end is read when the append is durable, maybe after the next one's.
                    if (end < next) {
                        LOG.debug("Mirror of {} ends at {}, not {}: fetching from there", tp, end, next);
                        m.restartAt(end);
                    }
                    fetchAll();
                }));
    }

    /**
     * The upstream no longer holds the offset the mirror needs (its retention or a DeleteRecords
     * passed it): the mirror restarts at the upstream's start, and the share-partitions reading it
     * move their start there, as on a broker whose own log start moved.
     */
    private void restartAtUpstreamStart(Mirror m, long fetchedFrom) {
        TopicPartition tp = m.partition.topicPartition();
        m.waiting = true;
        int generation = m.generation;
        var unused = upstream.listOffset(tp, ListOffsetsRequest.EARLIEST_TIMESTAMP)
                .thenCompose(start -> start > fetchedFrom
                        ? logs.restartMirror(m.partition, start).thenApply(v -> start)
                        : CompletableFuture.completedFuture(fetchedFrom))
                .whenComplete((start, t) -> upstream.execute(() -> {
                    m.waiting = false;
                    if (t != null) {
                        retryLater(m);
                        return;
                    }
                    LOG.info("The upstream no longer holds offset {} of {}: its mirror restarts at {}", fetchedFrom,
                            tp, start);
                    if (generation == m.generation) {
                        m.restartAt(start);
                    }
                    fetchAll();
                }));
    }

    private void retryLater(Mirror m) {
        m.inFetch = false;
        m.waiting = true;
        upstream.schedule(RETRY_BACKOFF_MS, () -> {
            m.waiting = false;
            fetchAll();
        });
    }
}
