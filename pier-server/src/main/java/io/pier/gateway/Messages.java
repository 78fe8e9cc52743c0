package io.pier.gateway;

import java.util.List;
import java.util.function.BiConsumer;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * Request and response objects made from generated message data, for the requests the gateway
 * cuts up and the answers it joins. kafka-clients gives no public constructor from data for most
 * APIs, so the data is written at the version and read back, which is also a check that the
 * version can carry every field that was set.
 */
final class Messages {
    private Messages() {}

    static AbstractRequest request(ApiKeys api, ApiMessage data, short version) {
        return AbstractRequest.parseRequest(api, version, MessageUtil.toByteBufferAccessor(data, version)).request;
    }

    static AbstractResponse response(ApiKeys api, ApiMessage data, short version) {
        return AbstractResponse.parseResponse(api, MessageUtil.toByteBufferAccessor(data, version), version);
    }

    /**
     * A request of the gateway's own, sent at the newest version both sides know: {@code data}
     * gives the message for the version chosen (Fetch names topics by id from v13, by name before).
     */
    static AbstractRequest.Builder<AbstractRequest> builder(ApiKeys api, short oldest,
            java.util.function.IntFunction<ApiMessage> data) {
        return new AbstractRequest.Builder<>(api, oldest, api.latestVersion()) {
            @Override
            public AbstractRequest build(short version) {
                return request(api, data.apply(version), version);
            }
        };
    }

    /**
     * One answer made of the answers to the parts of a request: the first one's data, with each
     * other one's {@code join}ed into it, at the request's version, throttled as the longest. A
     * single answer is returned as it is.
     */
    @SuppressWarnings("unchecked")
    static <R extends ApiMessage> AbstractResponse joined(ApiKeys api, short version, List<AbstractResponse> answers,
            BiConsumer<R, R> join) {
        AbstractResponse first = answers.get(0);
        if (answers.size() == 1) {
            return first;
        }
        R into = (R) first.data();
        int throttle = first.throttleTimeMs();
        for (AbstractResponse next : answers.subList(1, answers.size())) {
            join.accept(into, (R) next.data());
            throttle = Math.max(throttle, next.throttleTimeMs());
        }
        AbstractResponse out = response(api, into, version);
        out.maybeSetThrottleTimeMs(throttle);
        return out;
    }

    /** The answers of completed futures, in order. */
    static List<AbstractResponse> answers(List<java.util.concurrent.CompletableFuture<AbstractResponse>> parts) {
        List<AbstractResponse> out = new java.util.ArrayList<>();
        parts.forEach(p -> out.add(p.join()));
        return out;
    }
}
