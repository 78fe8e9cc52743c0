package io.pier.it.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of one broker listener that can hurt the connections through it:
 * add latency with jitter to every byte each way, hold everything (a network partition: bytes
 * wait, as TCP would retransmit them, until {@link #heal}), or reset every connection at once
 * (RST, as a crashed middlebox does, mid-request or mid-response). The broker advertises the
 * proxy's port, so every connection a client makes to that listener goes through it.
 */
final class FaultyProxy implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;
    private static final long PARTITION_POLL_MS = 5;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicInteger resets = new AtomicInteger();
    private final Thread acceptor;
    /** {min, max} in ms, replaced whole so that a reader never sees half a change. */
    private volatile long[] latency = {0, 0};
    private volatile boolean partitioned;
    private volatile boolean closed;

    /** Listens on {@code port} (a free loopback port) and forwards to {@code targetPort}. */
    FaultyProxy(int port, int targetPort) throws IOException {
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
    void latency(long minMs, long maxMs) {
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

    /** Holds every byte in both directions, and any close, until {@link #heal}. */
    void partition() {
        partitioned = true;
    }

    void heal() {
        partitioned = false;
    }

    /** Resets every open connection (RST both ways); clients reconnect through the proxy. */
    int resetAll() {
        int n = 0;
        for (Link link : links) {
            link.reset();
            n++;
        }
        resets.addAndGet(n);
        return n;
    }

    int resets() {
        return resets.get();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
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
     */
    private final class Link {
        private static final int QUEUED_CHUNKS = 64;

        private final Socket client;
        private final Socket upstream;
        private volatile boolean dead;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException {
            pump(client.getInputStream(), upstream.getOutputStream(), "up");
            pump(upstream.getInputStream(), client.getOutputStream(), "down");
        }

        private void pump(InputStream in, OutputStream out, String way) {
            BlockingQueue<Chunk> line = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            daemon("faulty-proxy-" + way + "-read", () -> read(in, line));
            daemon("faulty-proxy-" + way + "-write", () -> write(line, out));
        }

        private void read(InputStream in, BlockingQueue<Chunk> line) {
            long lastDue = 0;
            try {
                byte[] buf = new byte[CHUNK];
                int n;
                while ((n = in.read(buf)) > 0) {
                    lastDue = Math.max(lastDue, System.nanoTime() + latencyNanos());
                    if (!enqueue(line, new Chunk(Arrays.copyOf(buf, n), lastDue))) {
                        return;
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

        private void write(BlockingQueue<Chunk> line, OutputStream out) {
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
                        break;
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // reset, closed, or the other side went away
            } finally {
                reset();
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
    }

    /** Bytes read from one side, due to leave at {@code dueNanos}; null bytes: that side ended. */
    private record Chunk(byte[] bytes, long dueNanos) {}

    private static void daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
    }
}
