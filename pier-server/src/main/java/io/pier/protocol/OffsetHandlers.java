package io.pier.protocol;

import io.pier.log.OffsetAndTimestamp;
import io.pier.log.PartitionLog;
import io.pier.server.Partition;
import io.pier.server.PartitionRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;

/** ListOffsets and DeleteRecords: per-partition questions answered on the owning shard. */
public final class OffsetHandlers {
    private static final long UNKNOWN = -1L;
    private static final int UNKNOWN_LEADER_EPOCH = -1;
    /** ListOffsets has a leader epoch only from v4; before that the field must keep its default. */
    private static final short FIRST_VERSION_WITH_LEADER_EPOCH = 4;
    private final PartitionRegistry partitions;

    public OffsetHandlers(PartitionRegistry partitions) {
        this.partitions = partitions;
    }

    public CompletableFuture<AbstractResponse> listOffsets(ApiRequest request) {
        ListOffsetsRequest body = request.bodyAs(ListOffsetsRequest.class);
        List<CompletableFuture<ListOffsetsTopicResponse>> topics = new ArrayList<>();
        for (ListOffsetsTopic t : body.data().topics()) {
            List<CompletableFuture<ListOffsetsPartitionResponse>> results = new ArrayList<>();
            for (ListOffsetsPartition p : t.partitions()) {
                results.add(listOffset(new TopicPartition(t.name(), p.partitionIndex()), p.timestamp()));
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

    private CompletableFuture<ListOffsetsPartitionResponse> listOffset(TopicPartition tp, long timestamp) {
        ListOffsetsPartitionResponse r = new ListOffsetsPartitionResponse()
                .setPartitionIndex(tp.partition()).setTimestamp(UNKNOWN).setOffset(UNKNOWN).setLeaderEpoch(0);
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setLeaderEpoch(-1));
        }
        return partition.shard().call(() -> {
            PartitionLog log = partition.log();
            if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
                    || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                return r.setOffset(log.logStartOffset());
            }
            if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                return r.setOffset(log.highWatermark());
            }
            if (timestamp == ListOffsetsRequest.MAX_TIMESTAMP) {
                OffsetAndTimestamp max = log.maxTimestamp();
                return max == null ? r : r.setOffset(max.offset()).setTimestamp(max.timestampMs());
            }
            if (timestamp < 0) {
                // Tiered-storage lookups: nothing is tiered, so there is no such offset.
                return r;
            }
            OffsetAndTimestamp found = log.offsetForTimestamp(timestamp);
            return found == null ? r : r.setOffset(found.offset()).setTimestamp(found.timestampMs());
        });
    }

    public CompletableFuture<AbstractResponse> deleteRecords(ApiRequest request) {
        DeleteRecordsRequest body = request.bodyAs(DeleteRecordsRequest.class);
        List<CompletableFuture<DeleteRecordsTopicResult>> topics = new ArrayList<>();
        for (DeleteRecordsTopic t : body.data().topics()) {
            List<CompletableFuture<DeleteRecordsPartitionResult>> results = new ArrayList<>();
            for (DeleteRecordsPartition p : t.partitions()) {
                results.add(deleteBefore(new TopicPartition(t.name(), p.partitionIndex()), p.offset()));
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
        DeleteRecordsPartitionResult r = new DeleteRecordsPartitionResult()
                .setPartitionIndex(tp.partition()).setLowWatermark(UNKNOWN);
        Partition partition = partitions.get(tp);
        if (partition == null) {
            return CompletableFuture.completedFuture(r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
        }
        return partition.shard().call(() -> {
            PartitionLog log = partition.log();
            long target = offset == DeleteRecordsRequest.HIGH_WATERMARK ? log.highWatermark() : offset;
            if (target < 0) {
                return r.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
            }
            try {
                long low = log.deleteRecordsBefore(target);
                partition.fireDataListeners();
                return r.setLowWatermark(low);
            } catch (ApiException e) {
                return r.setErrorCode(Errors.forException(e).code());
            }
        });
    }
}
