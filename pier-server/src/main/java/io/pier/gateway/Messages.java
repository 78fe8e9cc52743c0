package io.pier.gateway;

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
}
