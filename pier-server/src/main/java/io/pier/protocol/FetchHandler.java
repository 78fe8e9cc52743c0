package io.pier.protocol;

import io.pier.log.AbortedTransaction;
import io.pier.service.Futures;
import io.pier.service.Logs;
import io.pier.service.LongPoll;
import io.pier.service.Partition;
import io.pier.service.Polls;
import io.pier.service.TopicService;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData.FetchPartition;
import org.apache.kafka.common.message.FetchRequestData.FetchTopic;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;

/**
 * Fetch for consumers, without fetch sessions (session id 0: every request is a full fetch,
 * which the client supports). A fetch that finds less than MinBytes is a long poll: it waits
 * until data arrives on one of its partitions or MaxWaitMs passes.
 */
public final class FetchHandler implements ApiHandler {
    private final TopicService topics;
    private final Logs logs;
    private final Polls polls;

    private final Access access;

    public FetchHandler(TopicService topics, Logs logs, Polls polls, Access access) {
        this.access = access;
        this.topics = topics;
        this.logs = logs;
        this.polls = polls;
    }

    /** One requested partition, resolved; {@code partition} is null when {@code error} says why. */
    private record Target(int topicIndex, String topicName, Uuid topicId, FetchPartition request,
            TopicPartition partition, Errors error) {}

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        FetchRequest body = request.bodyAs(FetchRequest.class);
        if (body.data().replicaId() >= 0 || (body.data().replicaState() != null
                && body.data().replicaState().replicaId() >= 0)) {
            // Replica fetches are for followers, and Pier has none (CVE-2018-1288).
            FetchResponseData data = new FetchResponseData().setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
            return CompletableFuture.completedFuture(FetchResponse.of(data));
        }
        IsolationLevels.of(body.data().isolationLevel()); // read per partition below, refused here once
        boolean byId = request.version() >= 13;
        List<FetchTopic> requested = body.data().topics();
        List<Target> targets = new ArrayList<>();
        for (int i = 0; i < requested.size(); i++) {
            FetchTopic t = requested.get(i);
            TopicMetadata topic = byId ? topics.topic(t.topicId()) : topics.topic(t.topic());
            String name = topic != null ? topic.name() : byId ? null : t.topic();
            boolean mayRead = name == null || access.topic(request, AclOperation.READ, name);
            for (FetchPartition p : t.partitions()) {
                // A partition the topic does not have is Logs.read's to report, like any read.
                TopicPartition tp = topic == null || !mayRead ? null : new TopicPartition(topic.name(), p.partition());
                Errors error = !mayRead ? Errors.TOPIC_AUTHORIZATION_FAILED : topic != null ? Errors.NONE
                        : byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                targets.add(new Target(i, topic == null ? t.topic() : topic.name(), t.topicId(), p, tp, error));
            }
        }
        LongPoll.Attempt<AbstractResponse> attempt = (last, wake) -> attempt(body, targets, last, wake);
        // At home on the first partition's shard: a one-partition fetch never changes threads.
        TopicPartition home = targets.isEmpty() ? null : targets.get(0).partition();
        return home == null ? polls.start(ApiKeys.FETCH, "", body.data().maxWaitMs(), attempt)
                : polls.start(ApiKeys.FETCH, home, body.data().maxWaitMs(), attempt);
    }

    /** Reads every partition; answers if that is enough (or the wait is over), else null to wait on. */
    private CompletableFuture<AbstractResponse> attempt(FetchRequest body, List<Target> targets, boolean last,
            Partition.DataListener wake) {
        // A fetch for no partitions (KafkaConsumer.close() ends its fetch session with one) has
        // nothing to wait for: Kafka answers it at once, and a client's close waits for that answer.
        boolean mustAnswer = last || body.data().minBytes() <= 0 || targets.isEmpty();
        int maxBytes = Math.max(0, body.data().maxBytes());
        List<CompletableFuture<PartitionData>> reads = new ArrayList<>();
        for (Target t : targets) {
            reads.add(read(body, t, maxBytes, mustAnswer ? null : wake));
        }
        return Futures.all(reads).thenApply(results -> {
            long bytes = 0;
            boolean anyError = false;
            for (PartitionData d : results) {
                bytes += d.records().sizeInBytes();
                anyError |= d.errorCode() != Errors.NONE.code();
            }
            if (mustAnswer || anyError || bytes >= body.data().minBytes()) {
                return build(targets, results, maxBytes);
            }
            return null;
        });
    }

    private CompletableFuture<PartitionData> read(FetchRequest body, Target t, int maxBytes,
            Partition.DataListener wake) {
        if (t.error() != Errors.NONE) {
            return CompletableFuture.completedFuture(partitionData(t, t.error(), MemoryRecords.EMPTY, -1, -1, -1));
        }
        int limit = Math.min(maxBytes, Math.max(0, t.request().partitionMaxBytes()));
        IsolationLevel isolation = body.isolationLevel();
        return logs.read(t.partition(), t.request().fetchOffset(), limit, isolation, wake).thenApply(r -> {
            PartitionData d = partitionData(t, r.error(), r.records(), r.highWatermark(), r.lastStableOffset(),
                    r.logStartOffset());
            return isolation == IsolationLevel.READ_COMMITTED && r.error() == Errors.NONE
                    ? d.setAbortedTransactions(aborted(r.abortedTransactions())) : d;
        });
    }

    /** What a read_committed consumer needs to drop aborted records: producer id and first offset. */
    private static List<FetchResponseData.AbortedTransaction> aborted(List<AbortedTransaction> transactions) {
        List<FetchResponseData.AbortedTransaction> out = new ArrayList<>(transactions.size());
        for (AbortedTransaction t : transactions) {
            out.add(new FetchResponseData.AbortedTransaction()
                    .setProducerId(t.producerId())
                    .setFirstOffset(t.firstOffset()));
        }
        return out;
    }

    private static PartitionData partitionData(Target t, Errors error, BaseRecords records, long highWatermark,
            long lastStableOffset, long logStartOffset) {
        return new PartitionData()
                .setPartitionIndex(t.request().partition())
                .setErrorCode(error.code())
                .setHighWatermark(highWatermark)
                .setLastStableOffset(lastStableOffset)
                .setLogStartOffset(logStartOffset)
                .setRecords(records);
    }

    private static AbstractResponse build(List<Target> targets, List<PartitionData> results, int maxBytes) {
        FetchResponseData data = new FetchResponseData().setSessionId(0);
        FetchableTopicResponse current = null;
        int previousTopic = -1;
        long total = 0;
        for (int i = 0; i < results.size(); i++) {
            Target t = targets.get(i);
            PartitionData d = results.get(i);
            int size = d.records().sizeInBytes();
            // The whole response honours MaxBytes, except that the first data always goes out.
            if (total > 0 && total + size > maxBytes) {
                d.setRecords(MemoryRecords.EMPTY);
            } else {
                total += size;
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
