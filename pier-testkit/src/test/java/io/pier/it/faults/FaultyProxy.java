package io.pier.it.faults;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * A loopback TCP proxy in front of one broker listener that can hurt the connections through it:
 * add latency with jitter to every byte each way, hold everything (a network partition: bytes
 * wait, as TCP would retransmit them, until {@link #heal}), or reset every connection at once
 * (RST, as a crashed middlebox does, mid-request or mid-response). The broker advertises the
 * proxy's port, so every connection a client makes to that listener goes through it.
 *
 * <p>It also reads the Kafka framing as the bytes go by (a 4-byte size, then that many bytes; a
 * request header starts with its API key, version, correlation id and client id, a response
 * header with the correlation id alone), and remembers which request each correlation id
 * belongs to on its connection, so that it can act on the exchanges of one API: let the test see
 * them ({@link #watch}), lose the responses ({@link #dropResponses}), or cut one client off by its
 * client id ({@link #cut}). The bytes it forwards are the bytes it read; only the first bytes of
 * a frame wait until its header is complete.
 */
public final class FaultyProxy implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;
    private static final long PARTITION_POLL_MS = 5;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicInteger resets = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;
    /** {min, max} in ms, replaced whole so that a reader never sees half a change. */
    private volatile long[] latency = {0, 0};
    /** {fraction of chunks lost, in millionths; shortest and longest retransmission delay, ms}. */
    private volatile long[] loss = {0, 0, 0};
    private final AtomicInteger lostChunks = new AtomicInteger();
    private volatile boolean partitioned;
    private volatile boolean closed;
    /** Client ids whose connections are reset at their first request, as {@link #cut} asks. */
    private final Set<String> cutClients = ConcurrentHashMap.newKeySet();
    private final Map<ApiKeys, Consumer<Exchange>> watchers = new ConcurrentHashMap<>();
    private volatile DropRule dropRule;
    private volatile long drainOnClientEndMs;
    private final AtomicInteger droppedResponses = new AtomicInteger();

    /** Listens on {@code port} (a free loopback port) and forwards to {@code targetPort}. */
    public FaultyProxy(int port, int targetPort) throws IOException {
        server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        acceptor = new Thread(this::acceptLoop, "faulty-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Adds a latency drawn anew for every chunk between {@code minMs} and {@code maxMs}, each way,
     * to every connection, open or new; 0, 0 takes it away.
     */
    public void latency(long minMs, long maxMs) {
        if (minMs < 0 || maxMs < minMs) {
            throw new IllegalArgumentException("latency " + minMs + ".." + maxMs + " ms");
        }
        latency = new long[] {minMs, maxMs};
    }

    private long latencyNanos() {
        long[] range = latency;
        long ms = range[0] == range[1] ? range[0] : ThreadLocalRandom.current().nextLong(range[0], range[1] + 1);
        return TimeUnit.MILLISECONDS.toNanos(ms);
    }

    /**
     * Packet loss as TCP shows it to the two ends: a lost segment is sent again after the
     * retransmission timeout, so the ends see no gap but a delay, and the bytes behind it wait
     * (they keep their order). Each chunk read is "lost" with probability {@code fraction} and then
     * waits a further {@code minRtoMs} to {@code maxRtoMs} (Linux's RTO is at least 200 ms); 0
     * takes it away. The proxy cannot drop real packets: it forwards a byte stream.
     */
    void loss(double fraction, long minRtoMs, long maxRtoMs) {
        if (fraction < 0 || fraction > 1 || minRtoMs < 0 || maxRtoMs < minRtoMs) {
            throw new IllegalArgumentException("loss " + fraction + ", " + minRtoMs + ".." + maxRtoMs + " ms");
        }
        loss = new long[] {Math.round(fraction * 1_000_000), minRtoMs, maxRtoMs};
    }

    /** Chunks delayed as lost so far. */
    int lostChunks() {
        return lostChunks.get();
    }

    /** The latency of one chunk, and a retransmission's delay if it is one of those lost. */
    private long delayNanos() {
        long[] l = loss;
        long nanos = latencyNanos();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        if (l[0] > 0 && random.nextLong(1_000_000) < l[0]) {
            lostChunks.incrementAndGet();
            nanos += TimeUnit.MILLISECONDS.toNanos(l[1] == l[2] ? l[1] : random.nextLong(l[1], l[2] + 1));
        }
        return nanos;
    }

    /** Holds every byte in both directions, and any close, until {@link #heal}. */
    public void partition() {
        partitioned = true;
    }

    public void heal() {
        partitioned = false;
    }

    /** Resets every open connection (RST both ways); clients reconnect through the proxy. */
    public int resetAll() {
        int n = 0;
        for (Link link : links) {
            link.reset();
            n++;
        }
        resets.addAndGet(n);
        return n;
    }

    public int resets() {
        return resets.get();
    }

    /**
     * Resets every open connection as the client sees it (RST), as {@link #resetAll} does, but
     * leaves each one's server side open and silent for {@code drainMs}, reading what the server
     * still sends (its bytes dropped), then resets it: to the server, a client that vanished and
     * whose connection a middlebox reset later. Every answer the server sends before the reset
     * reaches {@link #watch watchers}, never the client: with {@code drainMs} past the clients'
     * fetch wait, a request the server had parked is answered, not left to a connection it sees
     * closing.
     */
    public int resetClients(long drainMs) {
        return drainThenReset(link -> true, drainMs);
    }

    private int drainThenReset(Predicate<Link> which, long drainMs) {
        List<Link> drained = new ArrayList<>();
        for (Link link : links) {
            if (which.test(link) && link.drain()) {
                drained.add(link);
            }
        }
        resets.addAndGet(drained.size());
        if (!drained.isEmpty()) {
            daemon("faulty-proxy-drain", () -> {
                try {
                    Thread.sleep(drainMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                drained.forEach(Link::reset);
            });
        }
        return drained.size();
    }

    /**
     * From now on, when a client ends a connection (it closes it, or resets it), the proxy leaves
     * the server's side open and silent for {@code drainMs} before resetting it, as
     * {@link #resetClients} does, instead of resetting it at once. 0 turns it off.
     */
    public void drainOnClientEnd(long drainMs) {
        drainOnClientEndMs = drainMs;
    }

    /** Connections clients have opened through the proxy so far. */
    public int connections() {
        return accepted.get();
    }

    /**
     * A request the proxy forwarded and its response, each a whole frame without its size prefix,
     * with the moments ({@link System#nanoTime}) the proxy read the first bytes of each: how long
     * the server took to answer, give or take the proxy's own latency.
     */
    public record Exchange(RequestHeader header, ByteBuffer requestBytes, ByteBuffer responseBytes, long sentNanos,
            long answeredNanos) {
        /** The request as kafka-clients reads it. */
        public AbstractRequest request() {
            ByteBuffer b = requestBytes.duplicate();
            RequestHeader.parse(b);
            return AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(), new ByteBufferAccessor(b)).request;
        }

        /** The response as kafka-clients reads it. */
        public AbstractResponse response() {
            return AbstractResponse.parseResponse(responseBytes.duplicate(), header);
        }
    }

    /** What the proxy does to a connection after it dropped one of the responses on it. */
    public enum AfterDrop {
        /**
         * Resets it (RST both ways), as a path that breaks after losing a response would: the
         * client sees a disconnect at once, and its request fails without waiting for a timeout.
         */
        RESET,
        /**
         * Drops everything else the server sends on it, as a path dead in one direction would: the
         * client's request times out and the client closes the connection (which the proxy then
         * resets on to the server). Nothing later arrives that the client could take for the lost
         * answer, so the client's matching of responses to requests stays in step.
         */
        SILENCE
    }

    private record DropRule(ApiKeys key, AtomicInteger left, Predicate<AbstractRequest> when, AfterDrop after,
            Consumer<Exchange> onDrop) {
        /** Whether to drop the response to {@code request}; takes one from the budget if so. */
        boolean take(Pending request) {
            if (request.key() != key || request.bytes() == null || left.get() <= 0) {
                return false;
            }
            try {
                if (!when.test(request.parse())) {
                    return false;
                }
            } catch (RuntimeException e) {
                System.err.println("faulty proxy: cannot judge a request, its response passes: " + e);
                return false;
            }
            return left.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        }
    }

    /**
     * Drops the responses to the next {@code count} requests of API {@code key} that satisfy
     * {@code when}, on any connection, then does {@code after} to that connection; {@code onDrop}
     * gets each lost exchange (its request as sent to the server, its response as the server sent
     * it) once the whole response has come from the server. Replaces an earlier rule. The proxy
     * keeps the bytes of requests of {@code key} only while the rule is set, so a request on its way
     * when the rule was set is never dropped.
     */
    public void dropResponses(ApiKeys key, int count, Predicate<AbstractRequest> when, AfterDrop after,
            Consumer<Exchange> onDrop) {
        dropRule = new DropRule(key, new AtomicInteger(count), when, after, onDrop);
    }

    /** Drops no more responses. */
    public void stopDropping() {
        dropRule = null;
    }

    /** Responses dropped so far, by every rule. */
    public int droppedResponses() {
        return droppedResponses.get();
    }

    /**
     * Hands {@code watcher} every exchange of API {@code key} that the proxy forwards whole, on the
     * thread that reads the server's side, once the response has come. It must be quick.
     */
    public void watch(ApiKeys key, Consumer<Exchange> watcher) {
        watchers.put(key, watcher);
    }

    /**
     * Cuts off the client whose requests carry {@code clientId}, as a firewall that rejects its
     * host with RSTs would: every connection of it through the proxy is reset (RST both ways),
     * now, and each new one at its first request, which the server never sees. Other clients go on.
     * Returns the connections reset now.
     */
    public int cut(String clientId) {
        cutClients.add(clientId);
        int n = 0;
        for (Link link : links) {
            if (clientId.equals(link.clientId)) {
                link.reset();
                n++;
            }
        }
        resets.addAndGet(n);
        return n;
    }

    /**
     * {@link #cut} with the server's side of each connection open now ended as
     * {@link #resetClients} ends it: left open and silent for {@code drainMs}, read, then reset.
     */
    public int cut(String clientId, long drainMs) {
        cutClients.add(clientId);
        return drainThenReset(link -> clientId.equals(link.clientId), drainMs);
    }

    private boolean captured(ApiKeys key) {
        DropRule rule = dropRule;
        return watchers.containsKey(key) || (rule != null && rule.key() == key);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                accepted.incrementAndGet();
                Socket upstream = new Socket();
                try {
                    upstream.connect(target, 5_000);
                } catch (IOException e) {
                    client.close();
                    continue;
                }
                Link link = new Link(client, upstream);
                links.add(link);
                link.start();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("faulty proxy: accept failed: " + e);
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        partitioned = false;
        server.close();
        resetAll();
    }

    /**
     * One client connection and its upstream twin. Each way is a delay line: a reader thread takes
     * the bytes off one socket as they come and stamps each chunk with the time it may leave, a
     * writer thread sends it on then. So latency delays every byte without limiting throughput
     * (a large response is not delayed once per chunk), and, as on a real path, bytes keep their
     * order: with jitter, a chunk never leaves before the one read ahead of it. The queue between
     * the two is bounded, so a partition still stops the sender when the socket buffers fill.
     * Each reader cuts its stream into frames on the way ({@link Frames}).
     */
    private final class Link {
        private static final int QUEUED_CHUNKS = 64;

        private final Socket client;
        private final Socket upstream;
        /** Requests forwarded on this connection whose responses have not come yet, by correlation id. */
        private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
        /** The client id of its first request; null before. */
        private volatile String clientId;
        private volatile boolean dead;
        /** Set by {@link #drain}: the client is gone, the server's side is read to its end. */
        private volatile boolean draining;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException {
            pump(client.getInputStream(), upstream.getOutputStream(), false, new Requests());
            pump(upstream.getInputStream(), client.getOutputStream(), true, new Responses());
        }

        private void pump(InputStream in, OutputStream out, boolean toClient, Frames frames) {
            BlockingQueue<Chunk> line = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            String way = toClient ? "down" : "up";
            daemon("faulty-proxy-" + way + "-read", () -> read(in, line, frames));
            daemon("faulty-proxy-" + way + "-write", () -> write(line, out, toClient));
        }

        /**
         * The client ended the connection: with {@link #drainOnClientEnd} set, the server's side
         * drains that long before it is reset. Whether it drains.
         */
        private boolean clientEnded() {
            long drainMs = drainOnClientEndMs;
            if (drainMs <= 0 || !drain()) {
                return draining;
            }
            daemon("faulty-proxy-drain", () -> {
                try {
                    Thread.sleep(drainMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                reset();
            });
            return true;
        }

        /**
         * RST to the client; the server's side stays open, nothing more sent to it, its bytes read
         * (and dropped) until it closes or {@link #reset}. False if the link was already going.
         */
        boolean drain() {
            if (dead || draining) {
                return false;
            }
            draining = true;
            links.remove(this);
            abort(client);
            return true;
        }

        private void read(InputStream in, BlockingQueue<Chunk> line, Frames frames) {
            long lastDue = 0;
            try {
                byte[] buf = new byte[CHUNK];
                int n;
                while ((n = in.read(buf)) > 0) {
                    byte[] kept = frames.feed(buf, n);
                    if (kept.length > 0) {
                        lastDue = Math.max(lastDue, System.nanoTime() + delayNanos());
                        if (!enqueue(line, new Chunk(kept, lastDue))) {
                            return;
                        }
                    }
                    if (frames.ended) {
                        break; // a dropped response or a cut client: the connection goes after what was kept
                    }
                }
            } catch (IOException e) {
                // reset, closed, or the other side went away
            }
            // The end (FIN, RST or a reset here) follows the bytes read before it, as on the wire.
            enqueue(line, new Chunk(null, Math.max(lastDue, System.nanoTime() + latencyNanos())));
        }

        private boolean enqueue(BlockingQueue<Chunk> line, Chunk chunk) {
            try {
                while (!line.offer(chunk, PARTITION_POLL_MS, TimeUnit.MILLISECONDS)) {
                    if (dead) {
                        return false;
                    }
                }
                return true;
            } catch (InterruptedException e) {
                return false;
            }
        }

        private void write(BlockingQueue<Chunk> line, OutputStream out, boolean toClient) {
            boolean serverClosed = false;
            try {
                while (!dead) {
                    Chunk chunk = line.poll(PARTITION_POLL_MS, TimeUnit.MILLISECONDS);
                    if (chunk == null) {
                        continue;
                    }
                    while (partitioned && !closed) {
                        Thread.sleep(PARTITION_POLL_MS);
                    }
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    if (chunk.bytes() == null) {
                        serverClosed = toClient;
                        if (!toClient) {
                            clientEnded();
                        }
                        break;
                    }
                    if (toClient && draining) {
                        continue; // the client is gone: the server's bytes are read, and dropped
                    }
                    try {
                        out.write(chunk.bytes());
                        out.flush();
                    } catch (IOException e) {
                        if (!(toClient && (draining || clientEnded()))) {
                            throw e;
                        }
                    }
                }
            } catch (IOException | InterruptedException e) {
                // reset, closed, or the other side went away
            } finally {
                // A draining link ends when the server closes its side, or when its drain runs out.
                if (!draining || serverClosed) {
                    reset();
                }
            }
        }

        void reset() {
            dead = true;
            links.remove(this);
            abort(client);
            abort(upstream);
        }

        private void abort(Socket s) {
            try {
                s.setSoLinger(true, 0); // close with RST, not FIN
            } catch (SocketException e) {
                // already closed
            }
            try {
                s.close();
            } catch (IOException e) {
                // already closed
            }
        }

        /** The client's requests: notes each one's API and correlation id, and cuts off cut clients. */
        private final class Requests extends Frames {
            private Pending current;

            @Override
            int headLength(ByteBuffer head) {
                if (head.limit() < 4) {
                    return 4;
                }
                int size = head.getInt(0);
                if (size < 10 || size > MAX_FRAME) {
                    return -1;
                }
                if (head.limit() < 14) {
                    return 14; // api key, version, correlation id, client id length
                }
                short idLength = head.getShort(12);
                if (idLength < -1 || 10 + Math.max(0, idLength) > size) {
                    return -1;
                }
                return 14 + Math.max(0, idLength);
            }

            @Override
            Verdict decide(ByteBuffer head) {
                short apiKey = head.getShort(4);
                short version = head.getShort(6);
                int correlationId = head.getInt(8);
                short idLength = head.getShort(12);
                String id = idLength < 0 ? null
                        : new String(head.array(), head.arrayOffset() + 14, idLength, StandardCharsets.UTF_8);
                if (clientId == null && id != null) {
                    clientId = id;
                }
                if (id != null && cutClients.contains(id)) {
                    return Verdict.CUT;
                }
                ApiKeys key = ApiKeys.hasId(apiKey) ? ApiKeys.forId(apiKey) : null;
                current = new Pending(key, version, correlationId, id, System.nanoTime(), null);
                return key != null && captured(key) ? Verdict.FORWARD_AND_COPY : Verdict.FORWARD;
            }

            @Override
            void complete(ByteBuffer frame) {
                // Noted before the request's last bytes leave, so before any response to it can come.
                pending.put(current.correlationId(), current.withBytes(frame));
            }
        }

        /** The server's responses: matched to their requests, shown to watchers, or dropped. */
        private final class Responses extends Frames {
            private Pending current;
            private long answeredNanos;
            private DropRule dropping;

            @Override
            int headLength(ByteBuffer head) {
                if (head.limit() < 4) {
                    return 4;
                }
                int size = head.getInt(0);
                return size < 4 || size > MAX_FRAME ? -1 : 8;
            }

            @Override
            Verdict decide(ByteBuffer head) {
                current = pending.remove(head.getInt(4));
                answeredNanos = System.nanoTime();
                dropping = null;
                if (current == null || current.key() == null) {
                    return Verdict.FORWARD;
                }
                DropRule rule = dropRule;
                if (rule != null && rule.take(current)) {
                    dropping = rule;
                    return Verdict.DROP_AND_COPY;
                }
                return watchers.containsKey(current.key()) ? Verdict.FORWARD_AND_COPY : Verdict.FORWARD;
            }

            @Override
            void complete(ByteBuffer frame) {
                if (frame == null) {
                    return;
                }
                Exchange exchange =
                        new Exchange(current.header(), current.bytes(), frame, current.sentNanos(), answeredNanos);
                if (dropping != null) {
                    droppedResponses.incrementAndGet();
                    tell(dropping.onDrop(), exchange);
                    if (dropping.after() == AfterDrop.RESET) {
                        ended = true;
                    } else {
                        silent = true;
                    }
                } else {
                    Consumer<Exchange> watcher = watchers.get(current.key());
                    if (watcher != null) {
                        tell(watcher, exchange);
                    }
                }
            }

            private void tell(Consumer<Exchange> listener, Exchange exchange) {
                try {
                    listener.accept(exchange);
                } catch (RuntimeException e) {
                    System.err.println("faulty proxy: a listener failed: " + e);
                }
            }
        }
    }

    /** A forwarded request, noted until its response comes; bytes only when they were kept. */
    private record Pending(ApiKeys key, short version, int correlationId, String clientId, long sentNanos,
            ByteBuffer bytes) {
        Pending withBytes(ByteBuffer frame) {
            return new Pending(key, version, correlationId, clientId, sentNanos, frame);
        }

        RequestHeader header() {
            return new RequestHeader(key, version, clientId, correlationId);
        }

        AbstractRequest parse() {
            return new Exchange(header(), bytes, null, sentNanos, 0).request();
        }
    }

    private enum Verdict { FORWARD, FORWARD_AND_COPY, DROP_AND_COPY, CUT }

    /**
     * One direction's stream cut into Kafka frames. A frame's first bytes wait until its header can
     * be read ({@link #headLength}); then {@link #decide} forwards the frame as it comes or drops it
     * whole, and has it copied aside for {@link #complete} if asked. A size no Kafka frame has means
     * the stream is not (or no longer) in step: from then on everything passes untouched. Used by
     * one reader thread only.
     */
    private abstract static class Frames {
        static final int MAX_FRAME = 256 * 1024 * 1024;

        private final ByteArrayOutputStream kept = new ByteArrayOutputStream(CHUNK);
        /** The current frame's bytes, size prefix first: its head until decided, then all of it if copied. */
        private byte[] held = new byte[64];
        private int heldLength;
        /** Bytes of the current frame still to come once decided; -1 while its head is read. */
        private int left = -1;
        private boolean forward;
        private boolean copy;
        private boolean transparent;
        /** Set by {@link #complete}: drop everything from now on. */
        boolean silent;
        /** Set on a cut, or by {@link #complete}: the connection is to go. */
        boolean ended;

        /** The head length needed to decide, given the bytes held so far; -1: not a Kafka frame. */
        abstract int headLength(ByteBuffer head);

        abstract Verdict decide(ByteBuffer head);

        /** The frame has passed; {@code frame} is its copy (without the size prefix), or null. */
        abstract void complete(ByteBuffer frame);

        /** The bytes of {@code buf[0, n)} to forward, in order. */
        byte[] feed(byte[] buf, int n) {
            kept.reset();
            int i = 0;
            while (i < n && !ended && !silent) {
                if (transparent) {
                    kept.write(buf, i, n - i);
                    break;
                }
                if (left < 0) {
                    int need = headLength(ByteBuffer.wrap(held, 0, heldLength).slice());
                    if (need < 0) {
                        transparent = true;
                        kept.write(held, 0, heldLength);
                        heldLength = 0;
                    } else if (heldLength < need) {
                        int take = Math.min(need - heldLength, n - i);
                        hold(buf, i, take);
                        i += take;
                    } else {
                        Verdict verdict;
                        try {
                            verdict = decide(ByteBuffer.wrap(held, 0, heldLength).slice());
                        } catch (RuntimeException e) {
                            // A header kafka-clients cannot read: pass the rest untouched, as out of step.
                            System.err.println("faulty proxy: cannot read a frame header, passing the rest: " + e);
                            transparent = true;
                            kept.write(held, 0, heldLength);
                            heldLength = 0;
                            continue;
                        }
                        if (verdict == Verdict.CUT) {
                            ended = true;
                            break;
                        }
                        forward = verdict != Verdict.DROP_AND_COPY;
                        copy = verdict != Verdict.FORWARD;
                        if (forward) {
                            kept.write(held, 0, heldLength);
                        }
                        left = 4 + ByteBuffer.wrap(held, 0, 4).getInt() - heldLength;
                        if (!copy) {
                            heldLength = 0;
                        }
                        if (left == 0) {
                            finish();
                        }
                    }
                } else {
                    int take = Math.min(left, n - i);
                    if (forward) {
                        kept.write(buf, i, take);
                    }
                    if (copy) {
                        hold(buf, i, take);
                    }
                    i += take;
                    left -= take;
                    if (left == 0) {
                        finish();
                    }
                }
            }
            return kept.toByteArray();
        }

        private void hold(byte[] buf, int from, int length) {
            if (heldLength + length > held.length) {
                held = Arrays.copyOf(held, Math.max(held.length * 2, heldLength + length));
            }
            System.arraycopy(buf, from, held, heldLength, length);
            heldLength += length;
        }

        private void finish() {
            ByteBuffer frame = copy ? ByteBuffer.wrap(Arrays.copyOfRange(held, 4, heldLength)) : null;
            left = -1;
            heldLength = 0;
            if (held.length > CHUNK) {
                held = new byte[64]; // a large copied frame's buffer is not kept for the small ones
            }
            try {
                complete(frame);
            } catch (RuntimeException e) {
                System.err.println("faulty proxy: cannot handle a frame: " + e);
            }
        }
    }

    /** Bytes read from one side, due to leave at {@code dueNanos}; null bytes: that side ended. */
    private record Chunk(byte[] bytes, long dueNanos) {}

    private static void daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }
}
