package io.pier.it;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClientQuotasRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareGroupDescribeRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.DescribeClientQuotasRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;

/**
 * Request bodies built with kafka-clients' generated {@code *RequestData} classes, each valid at
 * the version it is asked for: a field the version lacks is left at its default (kafka-clients
 * refuses to write it otherwise), and names or ids are used as the version expects.
 */
final class MatrixRequests {
    static final String CLIENT_SOFTWARE_NAME = "pier-matrix";
    private static final int TIMEOUT_MS = 10_000;

    private MatrixRequests() {}

    static ApiVersionsRequestData apiVersions(short v) {
        ApiVersionsRequestData data = new ApiVersionsRequestData();
        if (v >= 3) {
            data.setClientSoftwareName(CLIENT_SOFTWARE_NAME).setClientSoftwareVersion("1.0");
        }
        return data;
    }

    /** By name before v12, by topic id (name null) from v12, where Kafka allows it. */
    static MetadataRequestData metadata(short v, String topic, Uuid topicId) {
        MetadataRequestData.MetadataRequestTopic t = new MetadataRequestData.MetadataRequestTopic();
        if (v >= 12) {
            t.setName(null).setTopicId(topicId);
        } else {
            t.setName(topic);
        }
        MetadataRequestData data = new MetadataRequestData().setTopics(new ArrayList<>(List.of(t)));
        if (v >= 4) {
            data.setAllowAutoTopicCreation(false);
        }
        return data;
    }

    static MemoryRecords records(String prefix, int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(),
                    (prefix + "-k" + i).getBytes(StandardCharsets.UTF_8),
                    (prefix + "-v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(Compression.NONE, records);
    }

    /** By topic name before v13, by topic id from v13. */
    static ProduceRequestData produce(short v, String topic, Uuid topicId, MemoryRecords records) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData();
        if (v >= 13) {
            t.setTopicId(topicId);
        } else {
            t.setName(topic);
        }
        t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records));
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(TIMEOUT_MS);
        data.topicData().add(t);
        return data;
    }

    /** From offset 0, without waiting; by topic name before v13, by topic id from v13. */
    static FetchRequestData fetch(short v, String topic, Uuid topicId) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
        if (v >= 13) {
            t.setTopicId(topicId);
        } else {
            t.setTopic(topic);
        }
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                .setPartitionMaxBytes(1024 * 1024));
        FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1024 * 1024)
                .setIsolationLevel(IsolationLevel.READ_UNCOMMITTED.id());
        if (v < 15) {
            data.setReplicaId(-1);
        }
        data.topics().add(t);
        return data;
    }

    static ListOffsetsRequestData listOffsets(short v, String topic, long timestamp) {
        ListOffsetsRequestData.ListOffsetsTopic t = new ListOffsetsRequestData.ListOffsetsTopic().setName(topic);
        t.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(timestamp));
        ListOffsetsRequestData data = new ListOffsetsRequestData().setReplicaId(ListOffsetsRequest.CONSUMER_REPLICA_ID);
        data.topics().add(t);
        return data;
    }

    static DeleteRecordsRequestData deleteRecords(String topic, long beforeOffset) {
        DeleteRecordsRequestData.DeleteRecordsTopic t = new DeleteRecordsRequestData.DeleteRecordsTopic().setName(topic);
        t.partitions().add(new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0)
                .setOffset(beforeOffset));
        DeleteRecordsRequestData data = new DeleteRecordsRequestData().setTimeoutMs(TIMEOUT_MS);
        data.topics().add(t);
        return data;
    }

    static CreateTopicsRequestData createTopics(String topic) {
        CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(TIMEOUT_MS);
        data.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(topic).setNumPartitions(1)
                .setReplicationFactor((short) 1));
        return data;
    }

    /** Names before v6, topic states from v6. */
    static DeleteTopicsRequestData deleteTopics(short v, String topic) {
        DeleteTopicsRequestData data = new DeleteTopicsRequestData().setTimeoutMs(TIMEOUT_MS);
        if (v >= 6) {
            data.topics().add(new DeleteTopicsRequestData.DeleteTopicState().setName(topic));
        } else {
            data.topicNames().add(topic);
        }
        return data;
    }

    static CreatePartitionsRequestData createPartitions(String topic, int count) {
        CreatePartitionsRequestData data = new CreatePartitionsRequestData().setTimeoutMs(TIMEOUT_MS);
        data.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(topic).setCount(count)
                .setAssignments(null));
        return data;
    }

    static InitProducerIdRequestData initProducerId(short v) {
        InitProducerIdRequestData data = new InitProducerIdRequestData().setTransactionalId(null)
                .setTransactionTimeoutMs(60_000);
        if (v >= 3) {
            data.setProducerId(-1).setProducerEpoch((short) -1);
        }
        return data;
    }

    /** One key before v4; a batch of keys from v4. */
    static FindCoordinatorRequestData findCoordinator(short v, List<String> groups) {
        FindCoordinatorRequestData data = new FindCoordinatorRequestData();
        if (v >= 4) {
            data.setCoordinatorKeys(new ArrayList<>(groups));
        } else {
            data.setKey(groups.get(0));
        }
        return data;
    }

    static DescribeClusterRequestData describeCluster() {
        return new DescribeClusterRequestData();
    }

    static DescribeConfigsRequestData describeTopicConfigs(String topic) {
        DescribeConfigsRequestData data = new DescribeConfigsRequestData();
        data.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource()
                .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic).setConfigurationKeys(null));
        return data;
    }

    static AlterClientQuotasRequestData setClientQuota(String clientId, String key, double value) {
        AlterClientQuotasRequestData data = new AlterClientQuotasRequestData();
        data.entries().add(new AlterClientQuotasRequestData.EntryData()
                .setEntity(List.of(new AlterClientQuotasRequestData.EntityData()
                        .setEntityType("client-id").setEntityName(clientId)))
                .setOps(List.of(new AlterClientQuotasRequestData.OpData().setKey(key).setValue(value))));
        return data;
    }

    static DescribeClientQuotasRequestData describeClientQuota(String clientId) {
        return new DescribeClientQuotasRequestData().setStrict(true).setComponents(List.of(
                new DescribeClientQuotasRequestData.ComponentData().setEntityType("client-id")
                        .setMatchType(DescribeClientQuotasRequest.MATCH_TYPE_EXACT).setMatch(clientId)));
    }

    static IncrementalAlterConfigsRequestData setTopicConfig(String topic, String name, String value) {
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource =
                new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(topic);
        resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(name)
                .setConfigOperation((byte) 0).setValue(value));
        IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData();
        data.resources().add(resource);
        return data;
    }

    static ShareGroupHeartbeatRequestData joinShareGroup(String group, String memberId, String topic) {
        return new ShareGroupHeartbeatRequestData().setGroupId(group).setMemberId(memberId).setMemberEpoch(0)
                .setSubscribedTopicNames(new ArrayList<>(List.of(topic)));
    }

    static ShareGroupHeartbeatRequestData leaveShareGroup(String group, String memberId) {
        return new ShareGroupHeartbeatRequestData().setGroupId(group).setMemberId(memberId).setMemberEpoch(-1);
    }

    /** Opens a share session (epoch 0) on partition 0 of {@code topicId}. */
    static ShareFetchRequestData shareFetch(String group, String memberId, Uuid topicId) {
        ShareFetchRequestData.FetchTopic t = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        t.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(group).setMemberId(memberId)
                .setShareSessionEpoch(0).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1024 * 1024)
                .setMaxRecords(100).setBatchSize(100);
        data.topics().add(t);
        return data;
    }

    /** Accepts offsets {@code first..last} of partition 0 in the session's next epoch. */
    static ShareAcknowledgeRequestData shareAcknowledge(String group, String memberId, int epoch, Uuid topicId,
            long first, long last) {
        ShareAcknowledgeRequestData.AcknowledgeTopic t = new ShareAcknowledgeRequestData.AcknowledgeTopic()
                .setTopicId(topicId);
        ShareAcknowledgeRequestData.AcknowledgePartition p = new ShareAcknowledgeRequestData.AcknowledgePartition()
                .setPartitionIndex(0);
        p.acknowledgementBatches().add(new ShareAcknowledgeRequestData.AcknowledgementBatch().setFirstOffset(first)
                .setLastOffset(last).setAcknowledgeTypes(new ArrayList<>(List.of((byte) 1))));
        t.partitions().add(p);
        ShareAcknowledgeRequestData data = new ShareAcknowledgeRequestData().setGroupId(group).setMemberId(memberId)
                .setShareSessionEpoch(epoch);
        data.topics().add(t);
        return data;
    }

    static ListGroupsRequestData listGroups() {
        return new ListGroupsRequestData();
    }

    static ShareGroupDescribeRequestData describeShareGroup(String group) {
        return new ShareGroupDescribeRequestData().setGroupIds(new ArrayList<>(List.of(group)));
    }

    static DeleteGroupsRequestData deleteGroups(String group) {
        return new DeleteGroupsRequestData().setGroupsNames(new ArrayList<>(List.of(group)));
    }

    static DescribeShareGroupOffsetsRequestData describeShareGroupOffsets(String group, String topic) {
        DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic t =
                new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic().setTopicName(topic)
                        .setPartitions(new ArrayList<>(List.of(0)));
        DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup g =
                new DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup().setGroupId(group)
                        .setTopics(new ArrayList<>(List.of(t)));
        DescribeShareGroupOffsetsRequestData data = new DescribeShareGroupOffsetsRequestData();
        data.groups().add(g);
        return data;
    }

    static AlterShareGroupOffsetsRequestData alterShareGroupOffsets(String group, String topic, long startOffset) {
        AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic t =
                new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic().setTopicName(topic);
        t.partitions().add(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestPartition()
                .setPartitionIndex(0).setStartOffset(startOffset));
        AlterShareGroupOffsetsRequestData data = new AlterShareGroupOffsetsRequestData().setGroupId(group);
        data.topics().add(t);
        return data;
    }

    static DeleteShareGroupOffsetsRequestData deleteShareGroupOffsets(String group, String topic) {
        DeleteShareGroupOffsetsRequestData data = new DeleteShareGroupOffsetsRequestData().setGroupId(group);
        data.topics().add(new DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic()
                .setTopicName(topic));
        return data;
    }
}
