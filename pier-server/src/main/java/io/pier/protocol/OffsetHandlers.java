package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.Logs;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

/** ListOffsets and DeleteRecords: per-partition questions, answered by {@link Logs}. */
public final class OffsetHandlers {
    private static final int UNKNOWN_LEADER_EPOCH = -1;
    /** ListOffsets has a leader epoch only from v4; before that the field must keep its default. */
    private static final short FIRST_VERSION_WITH_LEADER_EPOCH = 4;
    private final Logs logs;

    private final Access access;

    public OffsetHandlers(Logs logs, Access access) {
        this.logs = logs;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> listOffsets(ApiRequest request) {
        ListOffsetsRequest body = request.bodyAs(ListOffsetsRequest.class);
        IsolationLevel isolation = IsolationLevels.of(body.data().isolationLevel());
        List<CompletableFuture<ListOffsetsTopicResponse>> topics = new ArrayList<>();
        for (ListOffsetsTopic t : body.data().topics()) {
            List<CompletableFuture<ListOffsetsPartitionResponse>> results = new ArrayList<>();
            boolean mayDescribe = access.topic(request, AclOperation.DESCRIBE, t.name());
            for (ListOffsetsPartition p : t.partitions()) {
                results.add(mayDescribe
                        ? listOffset(new TopicPartition(t.name(), p.partitionIndex()), p.timestamp(), isolation)
                        : CompletableFuture.completedFuture(new ListOffsetsPartitionResponse()
                                .setPartitionIndex(p.partitionIndex())
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                                .setTimestamp(-1).setOffset(-1).setLeaderEpoch(UNKNOWN_LEADER_EPOCH)));
            }
            topics.add(Futures.all(results).thenApply(list -> {
                ListOffsetsTopicResponse r = new ListOffsetsTopicResponse().setName(t.name());
                r.partitions().addAll(list);
                return r;
            }));
        }
        boolean withLeaderEpoch = request.version() >= FIRST_VERSION_WITH_LEADER_EPOCH;
        return Futures.all(topics).thenApply(list -> {
            ListOffsetsResponseData data = new ListOffsetsResponseData();
            data.topics().addAll(list);
            if (!withLeaderEpoch) {
                list.forEach(t -> t.partitions().forEach(p -> p.setLeaderEpoch(UNKNOWN_LEADER_EPOCH)));
            }
            return new ListOffsetsResponse(data);
        });
    }

    private CompletableFuture<ListOffsetsPartitionResponse> listOffset(TopicPartition tp, long timestamp,
            IsolationLevel isolation) {
        return logs.offsetFor(tp, timestamp, isolation).thenApply(found -> new ListOffsetsPartitionResponse()
                .setPartitionIndex(tp.partition())
                .setErrorCode(found.error().code())
                .setTimestamp(found.timestampMs())
                .setOffset(found.offset())
                .setLeaderEpoch(found.error() == Errors.NONE ? 0 : UNKNOWN_LEADER_EPOCH));
    }

    public CompletableFuture<AbstractResponse> deleteRecords(ApiRequest request) {
        DeleteRecordsRequest body = request.bodyAs(DeleteRecordsRequest.class);
        List<CompletableFuture<DeleteRecordsTopicResult>> topics = new ArrayList<>();
        for (DeleteRecordsTopic t : body.data().topics()) {
            List<CompletableFuture<DeleteRecordsPartitionResult>> results = new ArrayList<>();
            boolean mayDelete = access.topic(request, AclOperation.DELETE, t.name());
            for (DeleteRecordsPartition p : t.partitions()) {
                results.add(mayDelete ? deleteBefore(new TopicPartition(t.name(), p.partitionIndex()), p.offset())
                        : CompletableFuture.completedFuture(new DeleteRecordsPartitionResult()
                                .setPartitionIndex(p.partitionIndex()).setLowWatermark(-1)
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
            }
            topics.add(Futures.all(results).thenApply(list -> {
                DeleteRecordsTopicResult r = new DeleteRecordsTopicResult().setName(t.name());
                list.forEach(x -> r.partitions().add(x));
                return r;
            }));
        }
        return Futures.all(topics).thenApply(list -> {
            DeleteRecordsResponseData data = new DeleteRecordsResponseData();
            list.forEach(x -> data.topics().add(x));
            return new DeleteRecordsResponse(data);
        });
    }

    private CompletableFuture<DeleteRecordsPartitionResult> deleteBefore(TopicPartition tp, long offset) {
        return logs.deleteRecordsBefore(tp, offset).thenApply(d -> new DeleteRecordsPartitionResult()
                .setPartitionIndex(tp.partition())
                .setErrorCode(d.error().code())
                .setLowWatermark(d.lowWatermark()));
    }
}
