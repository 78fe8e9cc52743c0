package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ScrapedMetrics;
import io.pier.server.Pier;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connection storm (reliability scenario S41): 10,000 connections from one address, opened
 * and dropped by eight threads at once, some answered and closed, some reset mid-request, some
 * dropped before they said anything, while {@code max.connections.per.ip} holds that address to
 * {@value #LIMIT} and 45 of its connections stay open throughout. The limit holds (the storm's
 * extra connections are closed unserved), a producer on another address is not disturbed (every
 * send acknowledged, none failed), and afterwards the broker holds no more file descriptors and
 * counts no more connections than before the storm.
 *
 * <p>The storm comes from 127.0.0.2, a loopback address of its own, so that the per-address limit
 * applies to it and not to the producer on 127.0.0.1.
 */
@Timeout(180)
class ConnectionStormIT {
    private static final int LIMIT = 50;
    private static final int HELD = 45;
    private static final int STORM = 10_000;
    private static final int THREADS = 8;
    private static final String STORM_ADDRESS = "127.0.0.2";
    private static final int READ_TIMEOUT_MS = 10_000;

    @Test
    void shouldHoldTheLimitServeOthersAndLeakNothingThroughAConnectionStorm() throws Exception {
        try (Pier pier = Pier.builder().config("max.connections.per.ip", Integer.toString(LIMIT)).start()) {
            // Given connections of the storm's address held open, each served, and a producer elsewhere
            List<Socket> held = new ArrayList<>();
            for (int i = 0; i < HELD; i++) {
                Socket s = connect(pier.port());
                assertThat(apiVersions(s, i)).as("held connection %d served", i).isTrue();
                held.add(s);
            }
            double connectionsBefore = openConnections(pier);
            long descriptorsBefore = openDescriptors();
            ProducerLoad producer = new ProducerLoad(pier.bootstrapServers());
            Thread producing = new Thread(producer, "storm-producer");
            producing.start();

            // When eight threads open and drop 10,000 connections from that address
            AtomicInteger served = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            ExecutorService storm = Executors.newFixedThreadPool(THREADS);
            List<Future<?>> done = new ArrayList<>();
            AtomicInteger next = new AtomicInteger();
            for (int t = 0; t < THREADS; t++) {
                done.add(storm.submit(() -> {
                    for (int n = next.getAndIncrement(); n < STORM; n = next.getAndIncrement()) {
                        stormOnce(pier.port(), n, served, refused);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(150, TimeUnit.SECONDS);
            }
            storm.shutdown();
            producer.stop();
            producing.join(30_000);

            System.out.printf("ConnectionStormIT: %d storm connections, of the %d that asked: %d served, %d closed"
                    + " unserved; producer: %d acknowledged, %d failed; descriptors before %d%n", STORM, STORM / 4,
                    served.get(), refused.get(), producer.acknowledged.get(), producer.failures.get(), descriptorsBefore);

            // Then the limit held: with 45 held, at most 5 more of the storm's were served at once
            assertThat(refused.get()).as("storm connections closed unserved past the limit").isPositive();
            assertThat(served.get()).as("storm connections served").isPositive();
            // the producer on another address never failed and kept being acknowledged
            assertThat(producer.failures.get()).as("failed sends during the storm").isZero();
            assertThat(producer.acknowledged.get()).as("sends acknowledged during the storm").isPositive();
            // the held connections are still served
            for (int i = 0; i < HELD; i++) {
                assertThat(apiVersions(held.get(i), 1_000 + i)).as("held connection %d after the storm", i).isTrue();
            }
            // and nothing leaked: the connections counted and the descriptors held come back down
            await("connections counted back to their number before the storm").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> assertThat(openConnections(pier)).isEqualTo(connectionsBefore));
            // the producer's own connections are closed now; a little slack for the JVM's own files
            List<Long> latencies = new ArrayList<>(producer.latenciesUs);
            latencies.sort(null);
            System.out.printf("ConnectionStormIT: descriptors after %d; producer's send latency p50 %d us, max %d us"
                    + " (the first send included)%n", openDescriptors(), latencies.get(latencies.size() / 2),
                    latencies.get(latencies.size() - 1));
            await("descriptors back to their number before the storm").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> assertThat(openDescriptors()).isLessThanOrEqualTo(descriptorsBefore + 20));
            for (Socket s : held) {
                s.close();
            }
        }
    }

    /**
     * One storm connection, in one of four ways by {@code n}: ask and close; ask and reset (SO_LINGER
     * 0) without reading the answer; connect and reset at once; send half a request and close.
     */
    private static void stormOnce(int port, int n, AtomicInteger served, AtomicInteger refused) throws IOException {
        try (Socket s = connect(port)) {
            switch (n % 4) {
                case 0 -> {
                    if (apiVersions(s, n)) {
                        served.incrementAndGet();
                    } else {
                        refused.incrementAndGet();
                    }
                }
                case 1 -> {
                    send(s, n);
                    s.setSoLinger(true, 0);
                }
                case 2 -> s.setSoLinger(true, 0);
                default -> {
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    out.writeInt(64);
                    out.writeShort(ApiKeys.API_VERSIONS.id);
                    out.flush();
                }
            }
        } catch (SocketTimeoutException hang) {
            throw hang;
        } catch (IOException closedByTheBroker) {
            // past the limit the broker closes at once, and a write can find it closed (broken pipe)
            if (n % 4 == 0) {
                refused.incrementAndGet();
            }
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(STORM_ADDRESS, 0));
        s.connect(new InetSocketAddress("127.0.0.1", port), READ_TIMEOUT_MS);
        s.setSoTimeout(READ_TIMEOUT_MS);
        return s;
    }

    /** True if the broker answered an ApiVersions request, false if it closed the connection instead. */
    private static boolean apiVersions(Socket s, int correlationId) throws IOException {
        send(s, correlationId);
        DataInputStream in = new DataInputStream(s.getInputStream());
        try {
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            return true;
        } catch (SocketTimeoutException hang) {
            throw hang;
        } catch (IOException closed) { // end of stream or a reset
            return false;
        }
    }

    private static void send(Socket s, int correlationId) throws IOException {
        ByteBuffer bytes = new ApiVersionsRequest.Builder((short) 3).build((short) 3)
                .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short) 3, "storm", correlationId));
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
    }

    private static double openConnections(Pier pier) throws IOException, InterruptedException {
        return ScrapedMetrics.scrape(pier.metricsPort()).value("pier_connections", "listener", "PLAINTEXT");
    }

    /** This JVM's open file descriptors: the in-process broker's and the test's. */
    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** Sends records one after another until stopped, counting acknowledgements and failures. */
    private static final class ProducerLoad implements Runnable {
        final AtomicInteger acknowledged = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        /** For the record only: timings are measured in benchmarks, not asserted. */
        final List<Long> latenciesUs = Collections.synchronizedList(new ArrayList<>());
        private final String bootstrap;
        private volatile boolean running = true;

        ProducerLoad(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        @Override
        public void run() {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("acks", "all");
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                for (int i = 0; running && i < 1_000_000; i++) {
                    try {
                        long start = System.nanoTime();
                        RecordMetadata unused = producer.send(new ProducerRecord<>("storm-side", "v" + i))
                                .get(30, TimeUnit.SECONDS);
                        latenciesUs.add((System.nanoTime() - start) / 1_000);
                        acknowledged.incrementAndGet();
                    } catch (Exception e) {
                        failures.incrementAndGet();
                    }
                }
            }
        }

        void stop() {
            running = false;
        }
    }
}
