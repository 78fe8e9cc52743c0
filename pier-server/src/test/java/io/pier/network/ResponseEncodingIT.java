package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.protocol.ApiRouter;
import io.pier.protocol.ApiVersionsHandler;
import io.pier.protocol.BrokerFeatures;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A handler whose response cannot be written at the request's version (here: a ListOffsets
 * leader epoch, a field only v4+ has) must not hang the connection: the request gets the API's
 * error response in its turn, and the requests after it on the same connection are answered.
 */
@Timeout(30)
class ResponseEncodingIT {
    private static final int READ_TIMEOUT_MS = 5_000;

    private NetworkServer server;

    @BeforeEach
    void startServer() throws InterruptedException {
        ApiRouter router = new ApiRouter();
        router.register(ApiKeys.API_VERSIONS, 0, 5, new ApiVersionsHandler(router, BrokerFeatures.of((short) 2, 1)))
                .register(ApiKeys.LIST_OFFSETS, 1, 10, request -> CompletableFuture.completedFuture(leaderEpochFive()));
        server = new NetworkServer(1024 * 1024, 60_000, router, 1).bind("127.0.0.1", 0);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    /** Sets a leader epoch whatever the version: a field that exists only from ListOffsets v4. */
    private static AbstractResponse leaderEpochFive() {
        ListOffsetsTopicResponse topic = new ListOffsetsTopicResponse().setName("t");
        topic.partitions().add(new ListOffsetsPartitionResponse().setPartitionIndex(0).setOffset(7).setLeaderEpoch(5));
        ListOffsetsResponseData data = new ListOffsetsResponseData();
        data.topics().add(topic);
        return new ListOffsetsResponse(data);
    }

    @Test
    void shouldAnswerUnserialisableResponseWithErrorAndKeepServingTheConnection() throws IOException {
        try (Socket socket = connect()) {
            // Given two requests pipelined on one connection, the first one's response unwritable at v2
            RequestHeader listOffsets = new RequestHeader(ApiKeys.LIST_OFFSETS, (short) 2, "it", 1);
            RequestHeader apiVersions = new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "it", 2);
            send(socket, listOffsets, listOffsetsRequest((short) 2));
            send(socket, apiVersions, new ApiVersionsRequest.Builder((short) 3).build((short) 3));

            // When the responses are read, Then the first is ListOffsets' error response, in its turn
            ListOffsetsResponse first = (ListOffsetsResponse) receive(socket, listOffsets);
            assertThat(first.data().topics()).singleElement().satisfies(t -> assertThat(t.partitions())
                    .singleElement()
                    .satisfies(p -> assertThat(p.errorCode()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code())));

            // And the next request on the same connection is answered
            ApiVersionsResponse second = (ApiVersionsResponse) receive(socket, apiVersions);
            assertThat(second.data().errorCode()).isEqualTo(Errors.NONE.code());
        }
    }

    @Test
    void shouldSendTheSameResponseAtAVersionThatHasTheField() throws IOException {
        try (Socket socket = connect()) {
            RequestHeader header = new RequestHeader(ApiKeys.LIST_OFFSETS, (short) 4, "it", 3);
            send(socket, header, listOffsetsRequest((short) 4));

            ListOffsetsResponse response = (ListOffsetsResponse) receive(socket, header);

            assertThat(response.data().topics().get(0).partitions().get(0).leaderEpoch()).isEqualTo(5);
        }
    }

    private static ListOffsetsRequest listOffsetsRequest(short version) {
        ListOffsetsTopic topic = new ListOffsetsTopic().setName("t");
        topic.partitions().add(new ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(topic)).build(version);
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.boundAddress().getPort()), READ_TIMEOUT_MS);
        socket.setSoTimeout(READ_TIMEOUT_MS);
        return socket;
    }

    private static void send(Socket socket, RequestHeader header, AbstractRequest request) throws IOException {
        ByteBuffer bytes = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
    }

    /** Reads one response frame; a read timeout here is the hang this test guards against. */
    private static AbstractResponse receive(Socket socket, RequestHeader header) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(frame), header);
    }
}
