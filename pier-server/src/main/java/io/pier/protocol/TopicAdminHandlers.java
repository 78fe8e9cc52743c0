package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.TopicService;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopicConfig;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicConfigs;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;

/** CreateTopics, DeleteTopics and CreatePartitions, each topic handled on its own. */
public final class TopicAdminHandlers {
    private final TopicService topics;
    private final int defaultPartitions;

    private final Access access;

    public TopicAdminHandlers(TopicService topics, int defaultPartitions, Access access) {
        this.access = access;
        this.topics = topics;
        this.defaultPartitions = defaultPartitions;
    }

    public CompletableFuture<AbstractResponse> createTopics(ApiRequest request) {
        CreateTopicsRequest body = request.bodyAs(CreateTopicsRequest.class);
        boolean validateOnly = body.data().validateOnly();
        List<CompletableFuture<CreatableTopicResult>> results = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        body.data().topics().forEach(t -> seen.merge(t.name(), 1, Integer::sum));
        for (CreatableTopic t : body.data().topics()) {
            CreatableTopicResult result = new CreatableTopicResult().setName(t.name());
            if (seen.get(t.name()) > 1) {
                results.add(CompletableFuture.completedFuture(fail(result, Errors.INVALID_REQUEST,
                        "Create topics request from client contains the topic '" + t.name() + "' more than once.")));
                continue;
            }
            if (!access.mayCreateTopic(request, t.name())) {
                results.add(CompletableFuture.completedFuture(fail(result, Errors.TOPIC_AUTHORIZATION_FAILED,
                        Errors.TOPIC_AUTHORIZATION_FAILED.message())));
                continue;
            }
            if (t.replicationFactor() > 1) {
                results.add(CompletableFuture.completedFuture(fail(result, Errors.INVALID_REPLICATION_FACTOR,
                        "Unable to replicate the partition " + t.replicationFactor()
                                + " time(s): Pier is a single broker.")));
                continue;
            }
            int partitions = t.numPartitions() == -1 ? defaultPartitions : t.numPartitions();
            if (!t.assignments().isEmpty()) {
                partitions = t.assignments().size();
            }
            Map<String, String> configs = new HashMap<>();
            for (CreatableTopicConfig c : t.configs()) {
                if (c.value() != null) {
                    configs.put(c.name(), c.value());
                }
            }
            results.add(topics.create(t.name(), partitions, configs, validateOnly)
                    .thenApply(created -> success(result, created, request.version()))
                    .exceptionally(e -> fail(result, e)));
        }
        return Futures.all(results).thenApply(list -> {
            CreateTopicsResponseData data = new CreateTopicsResponseData();
            list.forEach(r -> data.topics().add(r));
            return new CreateTopicsResponse(data);
        });
    }

    private CreatableTopicResult success(CreatableTopicResult result, TopicMetadata topic, short version) {
        // Kafka answers a null message on success; the generated default is "".
        result.setErrorMessage(null)
                .setTopicId(topic.id())
                .setNumPartitions(topic.partitionCount())
                .setReplicationFactor((short) 1);
        if (version >= 5) {
            List<CreatableTopicConfigs> configs = new ArrayList<>();
            TopicConfigs.effective(topics, topic).forEach((name, v) -> configs.add(new CreatableTopicConfigs()
                    .setName(name)
                    .setValue(v.value())
                    .setReadOnly(v.readOnly())
                    .setIsSensitive(false)
                    .setConfigSource(v.source().id())));
            result.setConfigs(configs);
        }
        return result;
    }

    private static CreatableTopicResult fail(CreatableTopicResult result, Throwable t) {
        ApiError error = ApiError.fromThrowable(Futures.unwrap(t));
        return fail(result, error.error(), error.message());
    }

    private static CreatableTopicResult fail(CreatableTopicResult result, Errors error, String message) {
        return result.setErrorCode(error.code()).setErrorMessage(message)
                .setTopicId(Uuid.ZERO_UUID).setNumPartitions(-1).setReplicationFactor((short) -1);
    }

    public CompletableFuture<AbstractResponse> deleteTopics(ApiRequest request) {
        DeleteTopicsRequest body = request.bodyAs(DeleteTopicsRequest.class);
        List<CompletableFuture<DeletableTopicResult>> results = new ArrayList<>();
        List<DeleteTopicState> targets = new ArrayList<>(body.topics());
        for (DeleteTopicState t : targets) {
            String name = t.name();
            Uuid id = t.topicId() == null ? Uuid.ZERO_UUID : t.topicId();
            DeletableTopicResult result = new DeletableTopicResult().setName(name).setTopicId(id);
            if (name == null) {
                TopicMetadata byId = topics.topic(id);
                if (byId == null) {
                    results.add(CompletableFuture.completedFuture(result.setErrorCode(Errors.UNKNOWN_TOPIC_ID.code())
                            .setErrorMessage("Topic id " + id + " does not exist.")));
                    continue;
                }
                name = byId.name();
                result.setName(name);
            }
            if (!access.topic(request, AclOperation.DELETE, name)) {
                results.add(CompletableFuture.completedFuture(result
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message())));
                continue;
            }
            results.add(topics.delete(name)
                    .thenApply(deleted -> result.setTopicId(deleted.id()))
                    .exceptionally(e -> {
                        ApiError error = ApiError.fromThrowable(Futures.unwrap(e));
                        return result.setErrorCode(error.error().code()).setErrorMessage(error.message());
                    }));
        }
        return Futures.all(results).thenApply(list -> {
            DeleteTopicsResponseData data = new DeleteTopicsResponseData();
            list.forEach(r -> data.responses().add(r));
            return new DeleteTopicsResponse(data);
        });
    }

    public CompletableFuture<AbstractResponse> createPartitions(ApiRequest request) {
        CreatePartitionsRequest body = request.bodyAs(CreatePartitionsRequest.class);
        List<CompletableFuture<CreatePartitionsTopicResult>> results = new ArrayList<>();
        for (CreatePartitionsTopic t : body.data().topics()) {
            CreatePartitionsTopicResult result = new CreatePartitionsTopicResult().setName(t.name());
            if (!access.topic(request, AclOperation.ALTER, t.name())) {
                results.add(CompletableFuture.completedFuture(result
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message())));
                continue;
            }
            results.add(topics.createPartitions(t.name(), t.count(), body.data().validateOnly())
                    .thenApply(grown -> result.setErrorMessage(null))
                    .exceptionally(e -> {
                        ApiError error = ApiError.fromThrowable(Futures.unwrap(e));
                        return result.setErrorCode(error.error().code()).setErrorMessage(error.message());
                    }));
        }
        return Futures.all(results).thenApply(list -> {
            CreatePartitionsResponseData data = new CreatePartitionsResponseData();
            list.forEach(r -> data.results().add(r));
            return new CreatePartitionsResponse(data);
        });
    }
}
