package io.pier.protocol;

import io.pier.service.Futures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;

/** DescribeConfigs and IncrementalAlterConfigs, dispatched by resource type. */
public final class ConfigHandlers {
    private final Map<ConfigResource.Type, ConfigResourceType> types;

    private final Access access;

    public ConfigHandlers(Map<ConfigResource.Type, ConfigResourceType> types, Access access) {
        this.types = types;
        this.access = access;
    }

    /**
     * Kafka's check per config resource: {@code op} (DESCRIBE_CONFIGS or ALTER_CONFIGS) on the topic,
     * the group, or, for broker configs, the cluster; NONE if allowed, else the error to answer.
     */
    private Errors denied(ApiRequest request, ConfigResource.Type type, String name, AclOperation op) {
        return switch (type) {
            case TOPIC -> access.topic(request, op, name) ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED;
            case GROUP -> access.group(request, op, name) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
            default -> access.cluster(request, op) ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED;
        };
    }

    public CompletableFuture<AbstractResponse> describeConfigs(ApiRequest request) {
        DescribeConfigsRequest body = request.bodyAs(DescribeConfigsRequest.class);
        DescribeConfigsResponseData data = new DescribeConfigsResponseData();
        for (DescribeConfigsResource resource : body.data().resources()) {
            DescribeConfigsResult result = new DescribeConfigsResult()
                    .setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName());
            ConfigResourceType type = types.get(ConfigResource.Type.forId(resource.resourceType()));
            if (type == null) {
                data.results().add(result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Unsupported resource type " + resource.resourceType()));
                continue;
            }
            Errors denied = denied(request, ConfigResource.Type.forId(resource.resourceType()),
                    resource.resourceName(), AclOperation.DESCRIBE_CONFIGS);
            if (denied != Errors.NONE) {
                data.results().add(result.setErrorCode(denied.code()).setErrorMessage(denied.message()));
                continue;
            }
            try {
                List<DescribeConfigsResourceResult> configs = new ArrayList<>();
                type.describe(resource.resourceName()).forEach((name, v) -> {
                    if (resource.configurationKeys() == null || resource.configurationKeys().contains(name)) {
                        configs.add(new DescribeConfigsResourceResult()
                                .setName(name)
                                .setValue(v.value())
                                .setReadOnly(v.readOnly())
                                .setConfigSource(v.source().id())
                                .setIsSensitive(false)
                                .setConfigType(DescribeConfigsResponse.ConfigType.UNKNOWN.id()));
                    }
                });
                data.results().add(result.setConfigs(configs));
            } catch (RuntimeException e) {
                ApiError error = ApiError.fromThrowable(e);
                data.results().add(result.setErrorCode(error.error().code()).setErrorMessage(error.message()));
            }
        }
        return CompletableFuture.completedFuture(new DescribeConfigsResponse(data));
    }

    public CompletableFuture<AbstractResponse> incrementalAlterConfigs(ApiRequest request) {
        IncrementalAlterConfigsRequest body = request.bodyAs(IncrementalAlterConfigsRequest.class);
        List<CompletableFuture<AlterConfigsResourceResponse>> results = new ArrayList<>();
        for (AlterConfigsResource resource : body.data().resources()) {
            AlterConfigsResourceResponse result = new AlterConfigsResourceResponse()
                    .setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName());
            ConfigResourceType type = types.get(ConfigResource.Type.forId(resource.resourceType()));
            if (type == null) {
                results.add(CompletableFuture.completedFuture(result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Unsupported resource type " + resource.resourceType())));
                continue;
            }
            Errors denied = denied(request, ConfigResource.Type.forId(resource.resourceType()),
                    resource.resourceName(), AclOperation.ALTER_CONFIGS);
            if (denied != Errors.NONE) {
                results.add(CompletableFuture.completedFuture(result.setErrorCode(denied.code())
                        .setErrorMessage(denied.message())));
                continue;
            }
            CompletableFuture<Void> done;
            try {
                done = type.alter(resource.resourceName(), new ArrayList<>(resource.configs()),
                        body.data().validateOnly());
            } catch (RuntimeException e) {
                done = CompletableFuture.failedFuture(e);
            }
            results.add(done.thenApply(v -> result.setErrorMessage(null)).exceptionally(e -> {
                ApiError error = ApiError.fromThrowable(Futures.unwrap(e));
                return result.setErrorCode(error.error().code()).setErrorMessage(error.message());
            }));
        }
        return Futures.all(results).thenApply(list -> {
            IncrementalAlterConfigsResponseData data = new IncrementalAlterConfigsResponseData();
            list.forEach(r -> data.responses().add(r));
            return new IncrementalAlterConfigsResponse(data);
        });
    }
}
