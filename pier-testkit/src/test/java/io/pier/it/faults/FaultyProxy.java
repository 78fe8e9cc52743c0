package io.pier.it.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of one broker listener that can hurt the connections through it:
 * add latency to every chunk, hold everything (a network partition: bytes wait, as TCP would
 * retransmit them, until {@link #heal}), or reset every connection at once (RST, as a crashed
 * middlebox does, mid-request or mid-response). The broker advertises the proxy's port, so every
 * connection a client makes to that listener goes through it.
 */
final class FaultyProxy implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;
    private static final long PARTITION_POLL_MS = 5;

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicInteger resets = new AtomicInteger();
    private final Thread acceptor;
    private volatile long delayMs;
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

    void delay(long ms) {
        delayMs = ms;
    }

    /** Holds every byte in both directions until {@link #heal}. */
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

    /** One client connection and its upstream twin, with a pump thread each way. */
    private final class Link {
        private final Socket client;
        private final Socket upstream;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException {
            pump(client.getInputStream(), upstream.getOutputStream(), "up");
            pump(upstream.getInputStream(), client.getOutputStream(), "down");
        }

        private void pump(InputStream in, OutputStream out, String way) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[CHUNK];
                try {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        while (partitioned && !closed) {
                            Thread.sleep(PARTITION_POLL_MS);
                        }
                        long delay = delayMs;
                        if (delay > 0) {
                            Thread.sleep(delay);
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // reset, closed, or the other side went away
                } finally {
                    reset();
                }
            }, "faulty-proxy-" + way);
            t.setDaemon(true);
            t.start();
        }

        void reset() {
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
}
