package io.pier.it;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * A one-shot blocking Kafka protocol client for error-path tests: a plain socket with a read
 * timeout that sends raw bytes or size-prefixed requests built with kafka-clients, and reads one
 * size-prefixed response at a time, or notices that the broker closed the connection.
 *
 * <p>Not thread-safe; one test thread owns it. Public for the tests of other packages (gateway).
 */
public final class RawKafkaClient implements AutoCloseable {
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);
    /** Responses in these tests are small; a larger announced size means the stream is out of step. */
    private static final int MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /** What one read from the socket produced. */
    sealed interface Received permits Frame, Closed, TimedOut {}

    /** A whole response frame, without its size prefix. */
    record Frame(ByteBuffer bytes) implements Received {}

    /** The broker closed (or reset) the connection. */
    record Closed(String how) implements Received {}

    /** Nothing arrived within the read timeout. */
    record TimedOut() implements Received {}

    private RawKafkaClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to {@code host:port} (as PierExtension#bootstrapServers gives it). */
    public static RawKafkaClient connect(String hostPort) throws IOException {
        return connect(hostPort, DEFAULT_TIMEOUT);
    }

    public static RawKafkaClient connect(String hostPort, Duration readTimeout) throws IOException {
        return connect(hostPort, readTimeout, 0);
    }

    /**
     * As {@link #connect(String, Duration)}, with socket send and receive buffers of
     * {@code bufferBytes} (0: the system's).
     */
    static RawKafkaClient connect(String hostPort, Duration readTimeout, int bufferBytes) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        Socket socket = new Socket();
        try {
            if (bufferBytes > 0) {
                socket.setReceiveBufferSize(bufferBytes);
                socket.setSendBufferSize(bufferBytes);
            }
            socket.connect(new InetSocketAddress(hostPort.substring(0, colon),
                    Integer.parseInt(hostPort.substring(colon + 1))), (int) DEFAULT_TIMEOUT.toMillis());
            socket.setSoTimeout((int) readTimeout.toMillis());
            socket.setTcpNoDelay(true);
            return new RawKafkaClient(socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Writes bytes exactly as given: no size prefix is added. */
    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Writes a 4-byte size prefix and then {@code payload}. */
    void sendFrame(ByteBuffer payload) throws IOException {
        sendRaw(frame(payload));
    }

    /** Serializes {@code request} with {@code header} (versions must match) and sends it framed. */
    public void send(RequestHeader header, AbstractRequest request) throws IOException {
        sendFrame(request.serializeWithHeader(header));
    }

    /** Header and body, unframed, as kafka-clients writes them, even when their versions disagree. */
    static ByteBuffer serialize(RequestHeader header, ApiMessage body, short bodyVersion) {
        return RequestUtils.serialize(header.data(), header.headerVersion(), body, bodyVersion);
    }

    /** Just the request header for {@code key} at {@code version}, unframed. */
    static ByteBuffer headerBytes(ApiKeys key, short version, int correlationId, String clientId) {
        RequestHeader header = new RequestHeader(key, version, clientId, correlationId);
        return MessageUtil.toByteBufferAccessor(header.data(), header.headerVersion()).buffer();
    }

    /** The size prefix and payload, as the bytes that go on the wire. */
    static byte[] frame(ByteBuffer payload) {
        ByteBuffer copy = payload.duplicate();
        ByteBuffer framed = ByteBuffer.allocate(4 + copy.remaining());
        framed.putInt(copy.remaining()).put(copy);
        return framed.array();
    }

    /** Reads one size-prefixed frame, or reports a close or a timeout. */
    Received receive() throws IOException {
        try {
            int size = in.readInt();
            if (size < 0 || size > MAX_RESPONSE_BYTES) {
                throw new IOException("implausible response size " + size);
            }
            byte[] body = new byte[size];
            in.readFully(body);
            return new Frame(ByteBuffer.wrap(body));
        } catch (EOFException e) {
            return new Closed("end of stream");
        } catch (SocketTimeoutException e) {
            return new TimedOut();
        } catch (SocketException e) {
            return new Closed(e.getMessage());
        }
    }

    /** Reads one response to {@code header} and parses it with kafka-clients. */
    public AbstractResponse receiveResponse(RequestHeader header) throws IOException {
        Received r = receive();
        if (!(r instanceof Frame frame)) {
            throw new AssertionError("expected a response to " + header + " but got " + r);
        }
        return AbstractResponse.parseResponse(frame.bytes(), header);
    }

    /**
     * Reads until the broker closes the connection; returns what ended the wait. Stray responses
     * before the close are skipped, at most a few, so the loop is bounded.
     */
    Received awaitClose() throws IOException {
        Received r = receive();
        for (int i = 0; i < 8 && r instanceof Frame; i++) {
            r = receive();
        }
        return r;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
