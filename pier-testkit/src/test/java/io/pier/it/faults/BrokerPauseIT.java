package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.ChildBroker;
import io.pier.it.share.ShareClients;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario S24 of the reliability reference: the whole broker process stopped with SIGSTOP for
 * longer than the clients' request timeout and the record lock, then let go on with SIGCONT, while
 * an idempotent acks=all producer writes and two explicit-mode share consumers ACCEPT what they get.
 *
 * <p>While the broker is stopped its monotonic clock keeps running, so every lock it handed out
 * runs out meanwhile; its sockets stay open, the clients' requests time out and they reconnect.
 * One consumer holds a poll's records unacknowledged across the pause. After the pause the other
 * consumer gets those records again, the holder's late ACCEPT of them is not confirmed, and records
 * flow again. At the end: every acknowledged record is in the log once (the producer's retries of
 * requests that timed out while the broker was stopped wrote nothing twice); every one
 * reached a terminal state, with its ACCEPT confirmed unless the answer to it was lost to a
 * timeout; each delivery of a record carries a delivery count of its own, growing at each consumer;
 * and no record was delivered with a higher count than the delivery whose ACCEPT was confirmed,
 * which is as far as clients can see that two consumers never held one record at once (I5, I7,
 * I8).
 */
@Timeout(150)
class BrokerPauseIT {
    private static final String TOPIC = "paused-broker";
    private static final String GROUP = "paused-broker-group";
    private static final long LOCK_MS = 3_000;
    /** Every client gives up on a request after 3 s, well inside the pause. */
    private static final int REQUEST_TIMEOUT_MS = 3_000;
    /** Past the request timeout and the lock, by a margin. */
    private static final Duration PAUSE = Duration.ofSeconds(10);
    /** How many ACCEPTs are confirmed before the pause, and records acknowledged after it. */
    private static final int WARM_UP = 300;
    private static final int AFTER_PAUSE = 500;
    /** A bound on the producer, whatever happens. */
    private static final int MAX_RECORDS = 30_000;
    /** Records flow again this soon after SIGCONT, or the clients did not recover. */
    private static final Duration RECOVERY = Duration.ofSeconds(30);

    @TempDir
    Path dataDir;

    @TempDir
    Path logDir;

    /** One record handed to one consumer: its offset, delivery count and value. */
    record Delivery(String consumer, long offset, short count, String value) {}

    private ChildBroker broker;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);

    /** Offset to value of every record whose produce was acknowledged. */
    private final Map<Long, String> acked = new ConcurrentHashMap<>();
    private final AtomicInteger sent = new AtomicInteger();
    private final List<String> failedSends = new CopyOnWriteArrayList<>();
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final AtomicLong producerRetries = new AtomicLong(-1);

    private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    /** Offset to the delivery whose ACCEPT the broker confirmed. */
    private final Map<Long, Delivery> confirmed = new ConcurrentHashMap<>();
    /** Offsets in commits that got no definite answer (a timeout, a lost connection): applied or not. */
    private final Set<Long> unanswered = ConcurrentHashMap.newKeySet();
    private final Map<String, Integer> unansweredCauses = new ConcurrentHashMap<>();
    private final Set<Long> refused = ConcurrentHashMap.newKeySet();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    /** When each commit whose ACCEPTs were confirmed returned (System.nanoTime). */
    private final Queue<Long> confirmationTimes = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stop() throws Exception {
        running.set(false);
        producing.set(false);
        for (Thread t : threads) {
            t.interrupt();
            t.join(30_000);
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldBreakNoShareInvariantWhenTheBrokerIsPausedPastRequestTimeoutAndLock() throws Exception {
        // Given a broker with 3 s record locks, a producer and two share consumers ACCEPTing
        broker = new ChildBroker(dataDir, logDir, "group.share.min.record.lock.duration.ms=1000",
                "group.share.record.lock.duration.ms=" + LOCK_MS);
        broker.start(0);
        String bootstrap = broker.bootstrapServers();
        ShareClients clients = new ShareClients(bootstrap);
        clients.createTopic(TOPIC, 1);
        clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest");

        Member holder = new Member("A", bootstrap);
        Member other = new Member("B", bootstrap);
        start("producer", () -> produce(bootstrap));
        start("consumer-A", holder);
        start("consumer-B", other);
        await("ACCEPTs confirmed before the pause").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> noViolationYet() && confirmed.size() >= WARM_UP);

        // ... one of which holds its next poll's records unacknowledged
        holder.holdNext.set(true);
        List<Long> held = holder.holding.get(30, TimeUnit.SECONDS);

        // When the broker is stopped for longer than the request timeout and the lock, then goes on
        long holderClosedBefore = holder.connectionsClosed.get();
        long otherClosedBefore = other.connectionsClosed.get();
        broker.pause();
        long pausedAt = System.nanoTime();
        Thread.sleep(PAUSE.toMillis());
        assertThat(broker.stopped()).as("broker still stopped").isTrue();
        long resumedAt = System.nanoTime();
        broker.resume();
        int ackedAtResume = acked.size();

        // Then the other consumer gets the held records, their locks having run out meanwhile
        await("the held records delivered to B").atMost(RECOVERY).pollInterval(Duration.ofMillis(50))
                .until(() -> noViolationYet() && deliveredTo("B", held).keySet().containsAll(held));
        // At least 2: a ShareFetch that B sent before the pause and gave up on may be served after
        // it, acquiring them for a session that is gone, whose records are released (I11).
        assertThat(deliveredTo("B", held)).as("held records B got, with their delivery counts")
                .allSatisfy((o, count) -> assertThat(count).as("delivery count of %d", o)
                        .isGreaterThanOrEqualTo((short) 2));

        // ... and the holder's late ACCEPT of them is not confirmed: refused as INVALID_RECORD_STATE,
        // or, when the holder gave up on some other request to the broker during the pause and
        // closed that connection, answered SHARE_SESSION_NOT_FOUND (the broker ended the share
        // session of that connection and released its records), which this client reports as a
        // NetworkException
        holder.go.countDown();
        Map<Long, String> late = holder.lateOutcome.get(30, TimeUnit.SECONDS);
        assertThat(late).as("the holder's late ACCEPTs, by offset").containsOnlyKeys(held)
                .allSatisfy((o, outcome) -> assertThat(outcome).isIn(InvalidRecordStateException.class.getSimpleName(),
                        "unanswered [NetworkException: The server disconnected before a response was received.]"));

        // ... the consumers gave up on requests the stopped broker did not answer
        await("both consumers closing a connection whose request timed out").atMost(RECOVERY)
                .until(() -> holder.connectionsClosed.get() > holderClosedBefore
                        && other.connectionsClosed.get() > otherClosedBefore);

        // ... and records go on flowing: the clients recovered
        await("records acknowledged after the pause").atMost(RECOVERY).pollInterval(Duration.ofMillis(50))
                .until(() -> noViolationYet() && acked.size() >= ackedAtResume + AFTER_PAUSE);
        producing.set(false);
        threads.get(0).join(60_000);
        assertThat(threads.get(0).isAlive()).as("producer done").isFalse();
        long logEnd = PartitionReader.readAll(bootstrap, TOPIC).size();
        await("every record terminal and the group's start offset at the log end").atMost(Duration.ofSeconds(45))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> noViolationYet() && settled(acked.keySet())
                        && PartitionReader.shareStartOffset(bootstrap, GROUP, TOPIC) == logEnd);
        running.set(false);
        for (Thread t : threads) {
            t.join(30_000);
            assertThat(t.isAlive()).as("%s stopped", t.getName()).isFalse();
        }

        long firstConfirmationAfter = confirmationTimes.stream().filter(t -> t > resumedAt).mapToLong(t -> t)
                .min().orElseThrow() - resumedAt;
        firstConfirmationAfter = TimeUnit.NANOSECONDS.toMillis(firstConfirmationAfter);
        System.out.printf("BrokerPauseIT: paused %d ms; %d records sent, %d acknowledged, %d producer retries;"
                + " %d deliveries (%d redeliveries), %d ACCEPTs confirmed, %d refused, %d unanswered %s;"
                + " %d held records retaken; connections closed by A %d -> %d, by B %d -> %d;"
                + " first ACCEPT confirmed %d ms after SIGCONT%n",
                Duration.ofNanos(resumedAt - pausedAt).toMillis(), sent.get(), acked.size(), producerRetries.get(),
                deliveries.size(), deliveries.stream().filter(d -> d.count() > 1).count(), confirmed.size(),
                refused.size(), unanswered.size(), unansweredCauses, held.size(), holderClosedBefore,
                holder.connectionsClosed.get(), otherClosedBefore, other.connectionsClosed.get(),
                firstConfirmationAfter);

        assertThat(violations).as("violations seen by the clients").isEmpty();
        assertThat(firstConfirmationAfter).as("ms from SIGCONT to the first ACCEPT confirmed (liveness, I10)")
                .isLessThan(RECOVERY.toMillis());
        assertThat(failedSends).as("sends that failed for good").isEmpty();
        assertThat(acked).as("every record sent acknowledged").hasSize(sent.get());
        assertThat(producerRetries.get()).as("produce requests retried after timing out in the pause")
                .isPositive();

        // I3, I4: the log holds every acknowledged record once, at its offset; nothing else
        TreeMap<Long, String> log = PartitionReader.readAll(bootstrap, TOPIC);
        assertThat(log).as("the log").isEqualTo(new TreeMap<>(acked));
        assertThat(new HashSet<>(log.values())).as("no value written twice").hasSize(log.size());

        // I2: what was delivered is what is in the log
        assertThat(deliveries).as("deliveries").allSatisfy(d ->
                assertThat(d.value()).as("value delivered at %d", d.offset()).isEqualTo(log.get(d.offset())));

        // I1: every record confirmed, unless the answer to its ACCEPT was lost to a timeout
        Set<Long> notConfirmed = new TreeMap<>(acked).keySet().stream()
                .filter(o -> !confirmed.containsKey(o)).collect(Collectors.toCollection(HashSet::new));
        assertThat(unanswered).as("ACCEPTs without an answer").containsAll(notConfirmed);

        // I5, I7, I8 from the delivery counts
        assertDeliveryCounts();
    }

    /** Whether every offset in {@code offsets} was confirmed, or sat in a commit that got no answer. */
    private boolean settled(Set<Long> offsets) {
        for (Long o : offsets) {
            if (!confirmed.containsKey(o) && !unanswered.contains(o)) {
                return false;
            }
        }
        return true;
    }

    private boolean noViolationYet() {
        assertThat(violations).as("violations seen so far").isEmpty();
        return true;
    }

    private Map<Long, Short> deliveredTo(String consumer, List<Long> offsets) {
        Map<Long, Short> got = new HashMap<>();
        deliveries.stream().filter(d -> d.consumer().equals(consumer) && offsets.contains(d.offset()))
                .forEach(d -> got.merge(d.offset(), d.count(), (a, b) -> (short) Math.max(a, b)));
        return got;
    }

    /**
     * The broker counts each acquisition of a record, so: no two deliveries of one offset carry the
     * same count, at one consumer or across both (that would be one lease handed out twice, I8);
     * each consumer sees an offset's counts grow (I7); and no delivery of an offset has a higher
     * count than the delivery whose ACCEPT was confirmed, before or after the confirmation (after:
     * I5; before: the record was taken from the consumer whose ACCEPT then counted, I8).
     */
    private void assertDeliveryCounts() {
        Map<Long, List<Delivery>> byOffset = new HashMap<>();
        deliveries.forEach(d -> byOffset.computeIfAbsent(d.offset(), k -> new ArrayList<>()).add(d));
        List<String> found = new ArrayList<>();
        byOffset.forEach((offset, list) -> {
            Set<Short> counts = new HashSet<>();
            Map<String, Short> last = new HashMap<>();
            for (Delivery d : list) {
                if (!counts.add(d.count())) {
                    found.add("offset " + offset + " delivered twice with count " + d.count() + ": " + list);
                }
                Short before = last.put(d.consumer(), d.count());
                if (before != null && d.count() <= before) {
                    found.add("offset " + offset + " delivered to " + d.consumer() + " with count " + d.count()
                            + " after count " + before);
                }
                Delivery accepted = confirmed.get(offset);
                if (accepted != null && d.count() > accepted.count()) {
                    found.add("offset " + offset + " delivered to " + d.consumer() + " with count " + d.count()
                            + ", above the count of its confirmed ACCEPT by " + accepted.consumer() + " ("
                            + accepted.count() + ")");
                }
            }
        });
        assertThat(found).as("delivery-count violations").isEmpty();
    }

    /**
     * The connections a client has closed: a request that times out makes it close that connection
     * (the broker closes none here).
     */
    private static long connectionCloses(Map<MetricName, ? extends Metric> metrics) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals("connection-close-total"))
                .mapToLong(e -> ((Number) e.getValue().metricValue()).longValue()).sum();
    }

    private void start(String name, Runnable body) {
        Thread t = new Thread(body, "broker-pause-" + name);
        threads.add(t);
        t.start();
    }

    /**
     * An idempotent acks=all producer writing unique values to partition 0, a few ms apart, until
     * told to stop; its sends may wait as long as 2 minutes, so none fails for the pause.
     */
    private void produce(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "2");
        p.put("request.timeout.ms", String.valueOf(REQUEST_TIMEOUT_MS));
        p.put("delivery.timeout.ms", "120000");
        p.put("reconnect.backoff.max.ms", "200");
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < MAX_RECORDS && producing.get(); i++) {
                String value = "v" + i;
                sent.incrementAndGet();
                var unused = producer.send(new ProducerRecord<>(TOPIC, 0, null, value), (md, e) -> {
                    if (e != null) {
                        failedSends.add(value + ": " + e);
                    } else if (acked.putIfAbsent(md.offset(), value) != null) {
                        violations.add("offset " + md.offset() + " acknowledged for two values");
                    }
                });
                if (i % 20 == 0) {
                    // Small requests, many of them in flight when the broker stops
                    producer.flush();
                }
                Thread.sleep(1);
            }
            producer.flush();
            producer.metrics().forEach((name, metric) -> {
                if (name.name().equals("record-retry-total") && name.group().equals("producer-metrics")) {
                    producerRetries.set(((Number) metric.metricValue()).longValue());
                }
            });
        } catch (InterruptedException | InterruptException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An explicit-mode share consumer that ACCEPTs each poll's records with one commitSync, noting
     * every delivery and what came of every ACCEPT. On request it holds one poll's records without
     * acknowledging them until told to go on, then ACCEPTs them late.
     */
    private final class Member implements Runnable {
        private final String name;
        private final String bootstrap;
        final AtomicBoolean holdNext = new AtomicBoolean();
        final CompletableFuture<List<Long>> holding = new CompletableFuture<>();
        final CountDownLatch go = new CountDownLatch(1);
        final CompletableFuture<Map<Long, String>> lateOutcome = new CompletableFuture<>();
        /** The client's connection-close-total, read after each poll (its own thread only may read it). */
        final AtomicLong connectionsClosed = new AtomicLong();

        Member(String name, String bootstrap) {
            this.name = name;
            this.bootstrap = bootstrap;
        }

        @Override
        public void run() {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("group.id", GROUP);
            p.put("client.id", "consumer-" + name);
            p.put("share.acknowledgement.mode", "explicit");
            p.put("request.timeout.ms", String.valueOf(REQUEST_TIMEOUT_MS));
            p.put("reconnect.backoff.max.ms", "200");
            // Small acquisitions, all handed to the application: what it holds is all that is locked for it.
            p.put("max.poll.records", "10");
            p.put("share.acquire.mode", "record_limit");
            long deadline = System.nanoTime() + Duration.ofSeconds(140).toNanos();
            try (KafkaShareConsumer<String, String> c =
                    new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                c.subscribe(Set.of(TOPIC));
                while (running.get() && System.nanoTime() < deadline) {
                    List<ConsumerRecord<String, String>> got = new ArrayList<>();
                    try {
                        c.poll(Duration.ofMillis(100)).forEach(got::add);
                    } catch (InterruptException e) {
                        return;
                    } catch (KafkaException e) {
                        unansweredCauses.merge("poll " + e.getClass().getSimpleName(), 1, Integer::sum);
                        continue;
                    }
                    connectionsClosed.set(connectionCloses(c.metrics()));
                    if (got.isEmpty()) {
                        continue;
                    }
                    for (ConsumerRecord<String, String> r : got) {
                        deliveries.add(new Delivery(name, r.offset(), r.deliveryCount().orElse((short) -1), r.value()));
                    }
                    boolean late = holdNext.compareAndSet(true, false);
                    if (late) {
                        // Stands for a consumer busy with these records while the broker is stopped.
                        holding.complete(got.stream().map(ConsumerRecord::offset).toList());
                        if (!go.await(120, TimeUnit.SECONDS)) {
                            return;
                        }
                    }
                    Map<Long, String> outcome = acceptAll(c, got);
                    if (late) {
                        lateOutcome.complete(outcome);
                    }
                }
            } catch (InterruptedException | InterruptException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                violations.add("consumer " + name + " failed: " + e);
            }
        }

        /** ACCEPTs the records in one commit; notes and returns the outcome of each offset. */
        private Map<Long, String> acceptAll(KafkaShareConsumer<String, String> c,
                List<ConsumerRecord<String, String>> got) {
            got.forEach(r -> c.acknowledge(r, AcknowledgeType.ACCEPT));
            String outcome;
            try {
                Map<TopicIdPartition, Optional<KafkaException>> result =
                        c.commitSync(Duration.ofMillis(2L * REQUEST_TIMEOUT_MS));
                if (!result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty)) {
                    outcome = "CONFIRMED";
                } else if (result.values().stream()
                        .anyMatch(e -> e.isPresent() && e.get() instanceof InvalidRecordStateException)) {
                    // refused, all of them (a partition's acknowledgements are applied all or none)
                    outcome = InvalidRecordStateException.class.getSimpleName();
                } else {
                    // No definite answer. A ShareAcknowledge the client gave up on after its request
                    // timeout comes back as UnknownServerException (kafka-clients 4.4 maps the
                    // disconnect it caused to UNKNOWN_SERVER_ERROR; the broker sent nothing), and
                    // the broker may still apply it when it reads it after SIGCONT.
                    outcome = "unanswered " + (result.isEmpty() ? "(no result)" : result.values().stream()
                            .flatMap(Optional::stream)
                            .map(e -> e.getClass().getSimpleName() + ": " + e.getMessage()).toList());
                }
            } catch (InterruptException e) {
                throw e;
            } catch (KafkaException | IllegalStateException e) {
                outcome = "unanswered " + e.getClass().getSimpleName();
            }
            Map<Long, String> byOffset = new HashMap<>();
            for (ConsumerRecord<String, String> r : got) {
                Delivery d = new Delivery(name, r.offset(), r.deliveryCount().orElse((short) -1), r.value());
                byOffset.put(r.offset(), outcome);
                if (outcome.equals("CONFIRMED")) {
                    Delivery before = confirmed.putIfAbsent(r.offset(), d);
                    if (before != null) {
                        violations.add("offset " + r.offset() + " ACCEPT confirmed twice: " + before + " and " + d);
                    }
                } else if (outcome.startsWith("unanswered")) {
                    unanswered.add(r.offset());
                } else {
                    refused.add(r.offset());
                }
            }
            if (outcome.equals("CONFIRMED")) {
                confirmationTimes.add(System.nanoTime());
            } else if (outcome.startsWith("unanswered")) {
                unansweredCauses.merge(outcome, 1, Integer::sum);
            }
            return byOffset;
        }
    }
}
