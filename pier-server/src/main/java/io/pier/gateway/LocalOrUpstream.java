package io.pier.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import io.pier.protocol.ApiHandler;
import io.pier.protocol.ApiRequest;

/**
 * Requests whose parts are answered in two places on a gateway: share groups and their configs
 * by the gateway's own engine, everything else by the upstream. The request is cut in two, each
 * part answered where it belongs, and the answers joined (ListGroups: both lists).
 */
final class LocalOrUpstream {
    private LocalOrUpstream() {}

    /**
     * The share groups this gateway node coordinates ({@code coordinated}: a group another node
     * took over may linger in this node's memory), with its part of the upstream's groups.
     */
    static ApiHandler listGroups(ApiHandler local, ApiHandler upstream, Predicate<String> coordinated) {
        return request -> local.handle(request).thenCombine(upstream.handle(request), (mine, theirs) -> {
            ListGroupsResponseData joined = ((ListGroupsResponseData) theirs.data()).duplicate();
            ListGroupsResponseData own = (ListGroupsResponseData) mine.data();
            own.groups().stream().filter(g -> coordinated.test(g.groupId()))
                    .forEach(g -> joined.groups().add(g.duplicate()));
            if (joined.errorCode() == Errors.NONE.code()) {
                joined.setErrorCode(own.errorCode());
            }
            return Messages.response(request.body().apiKey(), joined, request.version());
        });
    }

    /** DeleteGroups: the gateway's share groups here, the rest upstream. */
    static ApiHandler deleteGroups(ApiHandler local, ApiHandler upstream, Predicate<String> isLocal) {
        return split(local, upstream,
                (DeleteGroupsRequestData copy, Boolean mine) -> copy.groupsNames().removeIf(g -> isLocal.test(g) != mine),
                copy -> copy.groupsNames().isEmpty(),
                (DeleteGroupsResponseData into, DeleteGroupsResponseData part) ->
                        part.results().forEach(r -> into.results().add(r.duplicate())));
    }

    /** DescribeConfigs: GROUP resources (share-group settings) here, the rest upstream. */
    static ApiHandler describeConfigs(ApiHandler local, ApiHandler upstream) {
        return split(local, upstream,
                (DescribeConfigsRequestData copy, Boolean mine) -> copy.resources().removeIf(r -> isGroup(r.resourceType()) != mine),
                copy -> copy.resources().isEmpty(),
                (DescribeConfigsResponseData into, DescribeConfigsResponseData part) -> into.results().addAll(part.results()));
    }

    /** IncrementalAlterConfigs: as DescribeConfigs. */
    static ApiHandler incrementalAlterConfigs(ApiHandler local, ApiHandler upstream) {
        return split(local, upstream,
                (IncrementalAlterConfigsRequestData copy, Boolean mine) -> {
                    IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection kept =
                            new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
                    copy.resources().forEach(r -> {
                        if (isGroup(r.resourceType()) == mine) {
                            kept.add(r.duplicate());
                        }
                    });
                    copy.setResources(kept);
                },
                copy -> copy.resources().isEmpty(),
                (IncrementalAlterConfigsResponseData into, IncrementalAlterConfigsResponseData part) ->
                        into.responses().addAll(part.responses()));
    }

    private static boolean isGroup(byte resourceType) {
        return resourceType == ConfigResource.Type.GROUP.id();
    }

    /** Keeps in a copy of the request the part that is answered here ({@code mine}) or upstream. */
    interface Keep<Q extends ApiMessage> {
        void keep(Q copy, Boolean mine);
    }

    @SuppressWarnings("unchecked")
    private static <Q extends ApiMessage, R extends ApiMessage> ApiHandler split(ApiHandler local,
            ApiHandler upstream, Keep<Q> keep, Predicate<Q> empty, BiConsumer<R, R> join) {
        return request -> {
            AbstractRequest body = request.body();
            List<CompletableFuture<AbstractResponse>> parts = new ArrayList<>();
            for (boolean mine : new boolean[] {true, false}) {
                Q copy = (Q) body.data().duplicate();
                keep.keep(copy, mine);
                if (empty.test(copy)) {
                    continue;
                }
                ApiRequest part = new ApiRequest(request.header(), Messages.request(body.apiKey(), copy,
                        request.version()), request.connection());
                parts.add((mine ? local : upstream).handle(part));
            }
            if (parts.size() == 1) {
                return parts.get(0);
            }
            if (parts.isEmpty()) {
                return upstream.handle(request);
            }
            return parts.get(0).thenCombine(parts.get(1), (a, b) -> {
                R joined = (R) ((R) a.data()).duplicate();
                join.accept(joined, (R) b.data());
                AbstractResponse out = Messages.response(body.apiKey(), joined, request.version());
                out.maybeSetThrottleTimeMs(Math.max(a.throttleTimeMs(), b.throttleTimeMs()));
                return out;
            });
        };
    }
}
