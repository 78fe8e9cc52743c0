package io.pier.network;

import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a handler's response into one response frame (size prefix, header and body) at the
 * request's version, as a kafka-clients {@link Send}: the header and fields are serialised to the
 * heap, while records are referenced where they are (a {@code MemoryRecords} buffer, a segment
 * file) and only read when the send is written. Stateless; called on the connection's event loop.
 *
 * <p>kafka-clients refuses to write a field the negotiated version lacks (a non-default value in
 * it throws), so a handler that sets one would otherwise leave its request unanswered and the
 * client waiting forever. Instead that request gets the API's own error response with
 * UNKNOWN_SERVER_ERROR, in its turn, and the failure is logged once with the API and version.
 * Only if even that cannot be written does {@link #encode} throw, and the caller closes the
 * connection: a client notices a close, never a missing answer.
 */
final class ResponseEncoder {
    private static final Logger LOG = LoggerFactory.getLogger(ResponseEncoder.class);

    private ResponseEncoder() {}

    /** Thrown when neither the response nor the API's error response can be serialised. */
    static final class UnencodableResponseException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnencodableResponseException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The frame for {@code response}, or for {@code request}'s error response when the first
     * cannot be serialised at the request's version.
     *
     * @param request the parsed request body; null only for the KIP-511 ApiVersions fallback,
     *     whose v0 answer has no version-dependent field
     */
    static Send encode(RequestHeader header, AbstractRequest request, AbstractResponse response,
            String connectionId) {
        try {
            return serialize(header, response);
        } catch (RuntimeException e) {
            String what = header.apiKey() + " v" + header.apiVersion() + " (correlation id "
                    + header.correlationId() + ") from " + connectionId;
            if (request == null) {
                throw new UnencodableResponseException("cannot serialise the response to " + what, e);
            }
            Send fallback;
            try {
                fallback = serialize(header, request.getErrorResponse(0,
                        new UnknownServerException("the broker could not serialise its response")));
            } catch (RuntimeException again) {
                e.addSuppressed(again);
                throw new UnencodableResponseException("cannot serialise the response to " + what
                        + ", nor its error response", e);
            }
            LOG.error("The response to {} cannot be serialised at its version; answered {} instead",
                    what, Errors.UNKNOWN_SERVER_ERROR, e);
            return fallback;
        }
    }

    private static Send serialize(RequestHeader requestHeader, AbstractResponse response) {
        short version = requestHeader.apiVersion();
        if (response instanceof ApiVersionsResponse avr
                && avr.data().errorCode() == Errors.UNSUPPORTED_VERSION.code()) {
            version = 0; // KIP-511: a body the client can always parse
        }
        // Every field is checked against the version here, while building, not while writing.
        return SendBuilder.buildResponseSend(requestHeader.toResponseHeader(), response.data(), version);
    }
}
