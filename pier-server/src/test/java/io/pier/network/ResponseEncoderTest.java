package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

class ResponseEncoderTest {
    private static final short V2 = 2;
    private static final RequestHeader HEADER = new RequestHeader(ApiKeys.LIST_OFFSETS, V2, "test", 9);

    @Test
    void shouldEncodeTheErrorResponseWhenTheResponseHasAFieldTheVersionLacks() throws IOException {
        AbstractRequest request = new StubListOffsetsRequest(false);

        ByteBuffer frame = body(ResponseEncoder.encode(HEADER, request, unwritableAtV2(), "conn-test"));

        ListOffsetsResponse parsed = (ListOffsetsResponse) AbstractResponse.parseResponse(frame, HEADER);
        assertThat(parsed.errorCounts()).containsOnlyKeys(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void shouldThrowWhenNotEvenTheErrorResponseCanBeEncoded() {
        AbstractRequest request = new StubListOffsetsRequest(true);

        assertThatThrownBy(() -> ResponseEncoder.encode(HEADER, request, unwritableAtV2(), "conn-test"))
                .isInstanceOf(ResponseEncoder.UnencodableResponseException.class)
                .hasMessageContaining("LIST_OFFSETS v2");
    }

    /** The frame's bytes after its size prefix, which must count them. */
    private static ByteBuffer body(Send send) throws IOException {
        ByteBuf buf = Unpooled.buffer((int) send.size());
        ByteBufTarget.copy(send, buf);
        ByteBuffer frame = buf.nioBuffer();
        assertThat(frame.getInt()).isEqualTo(frame.remaining());
        return frame;
    }

    private static AbstractResponse unwritableAtV2() {
        ListOffsetsTopicResponse topic = new ListOffsetsTopicResponse().setName("t");
        topic.partitions().add(new ListOffsetsPartitionResponse().setPartitionIndex(0).setLeaderEpoch(3));
        ListOffsetsResponseData data = new ListOffsetsResponseData();
        data.topics().add(topic);
        return new ListOffsetsResponse(data);
    }

    /** A request whose error response is, on demand, as unwritable as the response itself. */
    private static final class StubListOffsetsRequest extends AbstractRequest {
        private final boolean errorResponseUnwritable;

        StubListOffsetsRequest(boolean errorResponseUnwritable) {
            super(ApiKeys.LIST_OFFSETS, V2);
            this.errorResponseUnwritable = errorResponseUnwritable;
        }

        @Override
        public ApiMessage data() {
            return new ListOffsetsRequestData();
        }

        @Override
        public AbstractResponse getErrorResponse(int throttleTimeMs, Throwable e) {
            if (errorResponseUnwritable) {
                return unwritableAtV2();
            }
            ListOffsetsTopicResponse topic = new ListOffsetsTopicResponse().setName("t");
            topic.partitions().add(new ListOffsetsPartitionResponse().setPartitionIndex(0)
                    .setErrorCode(Errors.forException(e).code()));
            ListOffsetsResponseData data = new ListOffsetsResponseData();
            data.topics().add(topic);
            return new ListOffsetsResponse(data);
        }
    }
}
