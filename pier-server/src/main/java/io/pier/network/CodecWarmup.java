package io.pier.network;

import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Decodes and encodes one made-up ApiVersions exchange the way {@link RequestChannelHandler} and
 * {@link ResponseEncoder} do, touching no socket and no broker state. Its only effect is that the
 * kafka-clients classes of the first request are initialised ahead of it: {@code ApiKeys} with every
 * message schema, {@code Errors} with one exception of each kind, the request and response codecs.
 * Their static initialisers take tens of milliseconds in a cold JVM, even with a class-data
 * archive; run while the broker opens its logs, they no longer delay the first answer.
 */
final class CodecWarmup {
    private CodecWarmup() {}

    static void run() {
        short version = ApiKeys.API_VERSIONS.latestVersion();
        RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, version, "pier-warmup", 0);
        ByteBuffer frame = new ApiVersionsRequest.Builder().build(version).serializeWithHeader(header);
        RequestHeader parsedHeader = RequestHeader.parse(frame);
        AbstractRequest request = AbstractRequest.parseRequest(parsedHeader.apiKey(), parsedHeader.apiVersion(),
                new ByteBufferAccessor(frame)).request;
        AbstractResponse response = request.getErrorResponse(0, new UnsupportedVersionException("warm-up"));
        ResponseEncoder.encode(parsedHeader, request, response, "warm-up");
    }
}
