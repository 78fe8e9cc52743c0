package io.pier.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.requests.FetchMetadata;

import io.pier.gateway.PartitionForwarding.PartitionRef;
import io.pier.gateway.PartitionForwarding.Shape;

/**
 * The {@link Shape} of each partition-addressed API: where its partitions are in the request, and
 * how its answers are joined (by appending the topics of one to the other: a topic whose
 * partitions had different leaders then appears once per leader, which clients read as one).
 */
final class PartitionShapes {
    private PartitionShapes() {}

    static final Shape<ProduceRequestData, ProduceResponseData> PRODUCE = new Shape<>() {
        @Override
        public List<PartitionRef> partitions(ProduceRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topicData().forEach(t -> t.partitionData().forEach(p ->
                    out.add(new PartitionRef(t.name(), t.topicId(), p.index()))));
            return out;
        }

        @Override
        public void retain(ProduceRequestData copy, Predicate<PartitionRef> keep) {
            ProduceRequestData.TopicProduceDataCollection kept = new ProduceRequestData.TopicProduceDataCollection();
            for (ProduceRequestData.TopicProduceData t : copy.topicData()) {
                t.partitionData().removeIf(p -> !keep.test(new PartitionRef(t.name(), t.topicId(), p.index())));
                if (!t.partitionData().isEmpty()) {
                    kept.add(t.duplicate());
                }
            }
            copy.setTopicData(kept);
        }

        @Override
        public void join(ProduceResponseData into, ProduceResponseData part) {
            part.responses().forEach(t -> into.responses().add(t.duplicate()));
        }

        @Override
        public void rewrite(ProduceResponseData answer) {
            // KIP-951 leader hints name upstream brokers: the client must keep coming to the gateway.
            answer.nodeEndpoints().clear();
            answer.responses().forEach(t -> t.partitionResponses().forEach(p ->
                    p.setCurrentLeader(new ProduceResponseData.LeaderIdAndEpoch())));
        }
    };

    static final Shape<FetchRequestData, FetchResponseData> FETCH = new Shape<>() {
        @Override
        public List<PartitionRef> partitions(FetchRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.topic(), t.topicId(), p.partition()))));
            return out;
        }

        @Override
        public void retain(FetchRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitions().removeIf(p ->
                    !keep.test(new PartitionRef(t.topic(), t.topicId(), p.partition()))));
            copy.topics().removeIf(t -> t.partitions().isEmpty());
        }

        @Override
        public boolean longPolls() {
            return true;
        }

        /**
         * Every fetch goes upstream without a session (full and sessionless): the gateway answers
         * with session id 0, so its clients never hold a session whose partitions it would have to
         * remember and split; they send full fetches, as to a broker whose session cache is full.
         */
        @Override
        public FetchRequestData outgoing(FetchRequestData request) {
            if (request.sessionId() == FetchMetadata.INVALID_SESSION_ID
                    && request.sessionEpoch() == FetchMetadata.FINAL_EPOCH && request.forgottenTopicsData().isEmpty()) {
                return request;
            }
            FetchRequestData copy = request.duplicate();
            copy.setSessionId(FetchMetadata.INVALID_SESSION_ID).setSessionEpoch(FetchMetadata.FINAL_EPOCH);
            copy.forgottenTopicsData().clear();
            return copy;
        }

        @Override
        public void join(FetchResponseData into, FetchResponseData part) {
            into.responses().addAll(part.responses());
        }

        @Override
        public void rewrite(FetchResponseData answer) {
            answer.setSessionId(FetchMetadata.INVALID_SESSION_ID);
            answer.nodeEndpoints().clear();
            answer.responses().forEach(t -> t.partitions().forEach(p -> {
                p.setPreferredReadReplica(-1); // no fetching from upstream followers: they are not addressable
                p.setCurrentLeader(new FetchResponseData.LeaderIdAndEpoch());
            }));
        }
    };

    static final Shape<ListOffsetsRequestData, ListOffsetsResponseData> LIST_OFFSETS = new Shape<>() {
        @Override
        public List<PartitionRef> partitions(ListOffsetsRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.name(), null, p.partitionIndex()))));
            return out;
        }

        @Override
        public void retain(ListOffsetsRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitions().removeIf(p ->
                    !keep.test(new PartitionRef(t.name(), null, p.partitionIndex()))));
            copy.topics().removeIf(t -> t.partitions().isEmpty());
        }

        @Override
        public void join(ListOffsetsResponseData into, ListOffsetsResponseData part) {
            into.topics().addAll(part.topics());
        }
    };

    static final Shape<DeleteRecordsRequestData, DeleteRecordsResponseData> DELETE_RECORDS = new Shape<>() {
        @Override
        public List<PartitionRef> partitions(DeleteRecordsRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.name(), null, p.partitionIndex()))));
            return out;
        }

        @Override
        public void retain(DeleteRecordsRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitions().removeIf(p ->
                    !keep.test(new PartitionRef(t.name(), null, p.partitionIndex()))));
            copy.topics().removeIf(t -> t.partitions().isEmpty());
        }

        @Override
        public void join(DeleteRecordsResponseData into, DeleteRecordsResponseData part) {
            part.topics().forEach(t -> into.topics().add(t.duplicate()));
        }
    };

    static final Shape<OffsetForLeaderEpochRequestData, OffsetForLeaderEpochResponseData> OFFSET_FOR_LEADER_EPOCH =
            new Shape<>() {
        @Override
        public List<PartitionRef> partitions(OffsetForLeaderEpochRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.topic(), null, p.partition()))));
            return out;
        }

        @Override
        public void retain(OffsetForLeaderEpochRequestData copy, Predicate<PartitionRef> keep) {
            OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection kept =
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t : copy.topics()) {
                t.partitions().removeIf(p -> !keep.test(new PartitionRef(t.topic(), null, p.partition())));
                if (!t.partitions().isEmpty()) {
                    kept.add(t.duplicate());
                }
            }
            copy.setTopics(kept);
        }

        @Override
        public void join(OffsetForLeaderEpochResponseData into, OffsetForLeaderEpochResponseData part) {
            part.topics().forEach(t -> into.topics().add(t.duplicate()));
        }
    };

    static final Shape<DescribeProducersRequestData, DescribeProducersResponseData> DESCRIBE_PRODUCERS =
            new Shape<>() {
        @Override
        public List<PartitionRef> partitions(DescribeProducersRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitionIndexes().forEach(p -> out.add(new PartitionRef(t.name(), null, p))));
            return out;
        }

        @Override
        public void retain(DescribeProducersRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitionIndexes().removeIf(p -> !keep.test(new PartitionRef(t.name(), null, p))));
            copy.topics().removeIf(t -> t.partitionIndexes().isEmpty());
        }

        @Override
        public void join(DescribeProducersResponseData into, DescribeProducersResponseData part) {
            into.topics().addAll(part.topics());
        }
    };
}
