package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.NodeInfo;
import io.pier.service.TopicService;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Metadata: this node leads every partition. Unknown topics are created with
 * {@code num.partitions} when both the broker ({@code auto.create.topics.enable}) and the request
 * allow it, as Kafka does.
 */
public final class MetadataHandler implements ApiHandler {
    private static final short FIRST_VERSION_WITH_TOPIC_IDS = 12;
    private final Supplier<NodeInfo> node;
    private final TopicService topics;
    private final boolean autoCreate;
    private final int defaultPartitions;
    private final Access access;

    public MetadataHandler(Supplier<NodeInfo> node, TopicService topics, boolean autoCreate, int defaultPartitions,
            Access access) {
        this.access = access;
        this.node = node;
        this.topics = topics;
        this.autoCreate = autoCreate;
        this.defaultPartitions = defaultPartitions;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        MetadataRequest body = request.bodyAs(MetadataRequest.class);
        List<MetadataRequestTopic> requested = body.data().topics();
        if (requested == null) {
            return CompletableFuture.completedFuture(respond(request, allTopics(request)));
        }
        if (request.version() < FIRST_VERSION_WITH_TOPIC_IDS) {
            for (MetadataRequestTopic t : requested) {
                // v10-v11 have the topic id field, but Kafka refuses to look topics up by id there.
                if (t.name() == null || !Uuid.ZERO_UUID.equals(t.topicId())) {
                    return CompletableFuture.failedFuture(new InvalidRequestException(
                            "Topic IDs are not supported in Metadata requests of version " + request.version()));
                }
            }
        }
        boolean allowCreate = autoCreate && (request.version() < 4 || body.data().allowAutoTopicCreation());
        List<CompletableFuture<MetadataResponseTopic>> results = new ArrayList<>();
        for (MetadataRequestTopic t : requested) {
            results.add(describe(request, t, allowCreate));
        }
        return Futures.all(results).thenApply(out -> respond(request, out));
    }

    /**
     * As Kafka: a topic the principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether or not
     * it exists (so names do not leak), and auto-creation needs CREATE on the cluster or the topic.
     */
    private CompletableFuture<MetadataResponseTopic> describe(ApiRequest request, MetadataRequestTopic requested,
            boolean allowCreate) {
        // A lookup by id leaves the name null or, as kafka-clients' MetadataRequest.Builder.forTopicIds
        // does, at its default "": the id decides.
        boolean byId = requested.topicId() != null && !Uuid.ZERO_UUID.equals(requested.topicId());
        if (requested.name() == null || byId) {
            Uuid id = requested.topicId();
            TopicMetadata topic = id == null ? null : topics.topic(id);
            if (topic == null) {
                return CompletableFuture.completedFuture(new MetadataResponseTopic()
                        .setTopicId(id == null ? Uuid.ZERO_UUID : id)
                        .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
            }
            if (!access.topic(request, AclOperation.DESCRIBE, topic.name())) {
                return CompletableFuture.completedFuture(new MetadataResponseTopic().setTopicId(id)
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            return CompletableFuture.completedFuture(toResponse(request, topic));
        }
        String name = requested.name();
        if (!access.topic(request, AclOperation.DESCRIBE, name)) {
            return CompletableFuture.completedFuture(error(name, Errors.TOPIC_AUTHORIZATION_FAILED));
        }
        TopicMetadata topic = topics.topic(name);
        if (topic != null) {
            return CompletableFuture.completedFuture(toResponse(request, topic));
        }
        if (!Topic.isValid(name)) {
            return CompletableFuture.completedFuture(error(name, Errors.INVALID_TOPIC_EXCEPTION));
        }
        if (!allowCreate) {
            return CompletableFuture.completedFuture(error(name, Errors.UNKNOWN_TOPIC_OR_PARTITION));
        }
        if (!access.mayCreateTopic(request, name)) {
            return CompletableFuture.completedFuture(error(name, Errors.TOPIC_AUTHORIZATION_FAILED));
        }
        return topics.create(name, defaultPartitions, Map.of(), false)
                .thenApply(t -> toResponse(request, t))
                .exceptionally(t -> {
                    Throwable cause = Futures.unwrap(t);
                    if (cause instanceof TopicExistsException && topics.topic(name) != null) {
                        return toResponse(request, topics.topic(name));
                    }
                    return error(name, Errors.forException(cause));
                });
    }

    /** Every topic the principal may DESCRIBE; the others are left out, as on Kafka. */
    private List<MetadataResponseTopic> allTopics(ApiRequest request) {
        List<MetadataResponseTopic> out = new ArrayList<>();
        for (TopicMetadata t : topics.topics()) {
            if (access.topic(request, AclOperation.DESCRIBE, t.name())) {
                out.add(toResponse(request, t));
            }
        }
        return out;
    }

    private static MetadataResponseTopic error(String name, Errors error) {
        return new MetadataResponseTopic().setName(name).setErrorCode(error.code());
    }

    private MetadataResponseTopic toResponse(ApiRequest request, TopicMetadata topic) {
        int nodeId = node.get().nodeId();
        MetadataResponseTopic out = new MetadataResponseTopic()
                .setName(topic.name())
                .setTopicId(topic.id())
                .setIsInternal(false)
                .setTopicAuthorizedOperations(operations(request, topic.name()));
        for (int p = 0; p < topic.partitionCount(); p++) {
            out.partitions().add(new MetadataResponsePartition()
                    .setPartitionIndex(p)
                    .setLeaderId(nodeId)
                    .setLeaderEpoch(0)
                    .setReplicaNodes(List.of(nodeId))
                    .setIsrNodes(List.of(nodeId))
                    .setOfflineReplicas(List.of()));
        }
        return out;
    }

    /** The topic's authorized operations as a bit field, if the client asked (v8+), else omitted. */
    private int operations(ApiRequest request, String topic) {
        MetadataRequest body = request.bodyAs(MetadataRequest.class);
        if (request.version() < 8 || !body.data().includeTopicAuthorizedOperations()) {
            return Access.OPERATIONS_OMITTED;
        }
        return access.operations(request, ResourceType.TOPIC, topic);
    }

    /** Metadata v8-10 carries the cluster's operations; later versions moved them to DescribeCluster. */
    private int clusterOperations(ApiRequest request) {
        MetadataRequest body = request.bodyAs(MetadataRequest.class);
        if (request.version() < 8 || request.version() > 10 || !body.data().includeClusterAuthorizedOperations()) {
            return Access.OPERATIONS_OMITTED;
        }
        return access.clusterOperations(request);
    }

    private AbstractResponse respond(ApiRequest request, List<MetadataResponseTopic> topicList) {
        NodeInfo n = node.get().seenFrom(request.connection());
        MetadataResponseData data = new MetadataResponseData()
                .setClusterId(n.clusterId())
                .setControllerId(n.nodeId())
                .setClusterAuthorizedOperations(clusterOperations(request));
        data.brokers().add(new MetadataResponseData.MetadataResponseBroker()
                .setNodeId(n.nodeId()).setHost(n.host()).setPort(n.port()));
        topicList.forEach(t -> data.topics().add(t));
        return new MetadataResponse(data, request.version());
    }
}
