package io.pier.protocol;

import io.pier.log.LogReadResult;
import io.pier.server.Partition;
import io.pier.server.PartitionRegistry;
import io.pier.server.TopicService;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;

/**
 * Fetch for consumers, without fetch sessions (session id 0: every request is a full fetch,
 * which the client supports). A fetch that finds less than MinBytes parks until data arrives on
 * one of its partitions or MaxWaitMs passes.
 */
public final class FetchHandler implements ApiHandler {
    private final TopicService topics;
    private final PartitionRegistry partitions;
    private final ScheduledExecutorService timer;

    public FetchHandler(TopicService topics, PartitionRegistry partitions, ScheduledExecutorService timer) {
        this.topics = topics;
        this.partitions = partitions;
        this.timer = timer;
    }

    /** One requested partition, resolved. */
    private record Target(int topicIndex, String topicName, Uuid topicId, FetchPartition request, Partition partition,
            Errors error) {}

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        FetchRequest body = request.bodyAs(FetchRequest.class);
        if (body.data().replicaId() >= 0 || (body.data().replicaState() != null
                && body.data().replicaState().replicaId() >= 0)) {
            // Replica fetches are for followers, and Pier has none (CVE-2018-1288).
            FetchResponseData data = new FetchResponseData().setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
            return CompletableFuture.completedFuture(FetchResponse.of(data));
        }
        boolean byId = request.version() >= 13;
        List<FetchTopic> requested = body.data().topics();
        List<Target> targets = new ArrayList<>();
        for (int i = 0; i < requested.size(); i++) {
            FetchTopic t = requested.get(i);
            TopicMetadata topic = byId ? topics.topic(t.topicId()) : topics.topic(t.topic());
            for (FetchPartition p : t.partitions()) {
                Partition partition = topic == null ? null : partitions.get(new TopicPartition(topic.name(), p.partition()));
                Errors error = Errors.NONE;
                if (topic == null) {
                    error = byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                } else if (partition == null) {
                    error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
                }
                targets.add(new Target(i, topic == null ? t.topic() : topic.name(), t.topicId(), p, partition, error));
            }
        }
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, body.data().maxWaitMs()));
        CompletableFuture<AbstractResponse> response = new CompletableFuture<>();
        new Poll(body, targets, deadlineNanos, response).attempt();
        return response;
    }

    /** One fetch request until it is answered: read, maybe park, read again on wake-up. */
    private final class Poll {
        private final FetchRequest body;
        private final List<Target> targets;
        private final long deadlineNanos;
        private final CompletableFuture<AbstractResponse> response;
        private final AtomicBoolean scheduledTimeout = new AtomicBoolean();

        Poll(FetchRequest body, List<Target> targets, long deadlineNanos, CompletableFuture<AbstractResponse> response) {
            this.body = body;
            this.targets = targets;
            this.deadlineNanos = deadlineNanos;
            this.response = response;
        }

        void attempt() {
            boolean last = System.nanoTime() >= deadlineNanos || body.data().minBytes() <= 0;
            AtomicBoolean woken = new AtomicBoolean();
            Partition.DataListener wake = new Partition.DataListener() {
                @Override
                public boolean isDone() {
                    return woken.get() || response.isDone();
                }

                @Override
                public void onDataChange() {
                    if (woken.compareAndSet(false, true)) {
                        attempt();
                    }
                }
            };
            List<CompletableFuture<PartitionData>> reads = new ArrayList<>();
            int maxBytes = Math.max(0, body.data().maxBytes());
            for (Target t : targets) {
                reads.add(read(t, maxBytes, last ? null : wake));
            }
            Futures.all(reads).whenComplete((results, error) -> {
                if (error != null) {
                    response.completeExceptionally(error);
                    return;
                }
                long bytes = 0;
                boolean anyError = false;
                for (PartitionData d : results) {
                    bytes += ((MemoryRecords) d.records()).sizeInBytes();
                    anyError |= d.errorCode() != Errors.NONE.code();
                }
                if (last || anyError || bytes >= body.data().minBytes()) {
                    woken.set(true);
                    response.complete(build(results, maxBytes));
                    return;
                }
                if (scheduledTimeout.compareAndSet(false, true)) {
                    long delay = Math.max(0, deadlineNanos - System.nanoTime());
                    Futures.schedule(timer, response, () -> {
                        if (!response.isDone()) {
                            woken.set(true);
                            attempt();
                        }
                    }, delay, TimeUnit.NANOSECONDS);
                }
            }).exceptionally(Futures.failing(response));
        }

        private CompletableFuture<PartitionData> read(Target t, int maxBytes, Partition.DataListener wake) {
            PartitionData empty = new PartitionData()
                    .setPartitionIndex(t.request().partition())
                    .setHighWatermark(-1)
                    .setLastStableOffset(-1)
                    .setLogStartOffset(-1)
                    .setRecords(MemoryRecords.EMPTY);
            if (t.error() != Errors.NONE) {
                return CompletableFuture.completedFuture(empty.setErrorCode(t.error().code()));
            }
            Partition p = t.partition();
            return p.shard().call(() -> {
                if (p.isDeleted()) {
                    return empty.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                }
                int limit = Math.min(maxBytes, Math.max(0, t.request().partitionMaxBytes()));
                try {
                    LogReadResult r = p.log().read(t.request().fetchOffset(), limit, true);
                    if (wake != null && r.records().sizeInBytes() == 0) {
                        p.onNextDataChange(wake);
                    }
                    return new PartitionData()
                            .setPartitionIndex(t.request().partition())
                            .setHighWatermark(r.highWatermark())
                            .setLastStableOffset(r.highWatermark())
                            .setLogStartOffset(r.logStartOffset())
                            .setAbortedTransactions(body.isolationLevel() == IsolationLevel.READ_COMMITTED
                                    ? new ArrayList<>() : null)
                            .setRecords(r.records());
                } catch (ApiException e) {
                    return empty.setErrorCode(Errors.forException(e).code())
                            .setHighWatermark(p.log().highWatermark())
                            .setLastStableOffset(p.log().highWatermark())
                            .setLogStartOffset(p.log().logStartOffset());
                }
            });
        }

        private AbstractResponse build(List<PartitionData> results, int maxBytes) {
            FetchResponseData data = new FetchResponseData().setSessionId(0);
            FetchableTopicResponse current = null;
            int previousTopic = -1;
            long total = 0;
            for (int i = 0; i < results.size(); i++) {
                Target t = targets.get(i);
                PartitionData d = results.get(i);
                MemoryRecords records = (MemoryRecords) d.records();
                // The whole response honours MaxBytes, except that the first data always goes out.
                if (total > 0 && total + records.sizeInBytes() > maxBytes) {
                    d.setRecords(MemoryRecords.EMPTY);
                } else {
                    total += records.sizeInBytes();
                }
                if (t.topicIndex() != previousTopic) {
                    current = new FetchableTopicResponse().setTopic(t.topicName()).setTopicId(t.topicId());
                    data.responses().add(current);
                    previousTopic = t.topicIndex();
                }
                current.partitions().add(d);
            }
            return FetchResponse.of(data);
        }
    }
}
