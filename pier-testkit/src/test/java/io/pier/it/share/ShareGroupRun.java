package io.pier.it.share;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/**
 * Runs share consumers of one group, each on its own thread, each accepting (explicit ACCEPT +
 * commitSync) every record it gets, and records what each consumer had accepted. Every consumer
 * loop is bounded by a shared deadline; {@link #close} stops them all and closes the consumers.
 */
final class ShareGroupRun implements AutoCloseable {
    /** One consumer's view: the records whose ACCEPT the broker confirmed. */
    static final class Member {
        final int index;
        final ConcurrentLinkedQueue<ConsumerRecord<String, String>> accepted = new ConcurrentLinkedQueue<>();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong startedNanos = new AtomicLong();
        final AtomicInteger polls = new AtomicInteger();
        final AtomicLong firstRecordNanos = new AtomicLong(-1);
        volatile Future<?> task;

        Member(int index) {
            this.index = index;
        }

        int count() {
            return accepted.size();
        }
    }

    /** Upper bound on the polls of one consumer, on top of the run's deadline. */
    private static final int MAX_POLLS = 100_000;

    private final ShareClients clients;
    private final String group;
    private final String topic;
    private final String[] consumerProps;
    private final long deadlineNanos;
    private final ExecutorService pool;
    private final List<Member> members = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> acceptCounts = new ConcurrentHashMap<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final AtomicInteger received = new AtomicInteger();
    /** "value: error" for each ACCEPT the broker did not confirm. */
    private final List<String> ackFailures = new CopyOnWriteArrayList<>();

    ShareGroupRun(ShareClients clients, String group, String topic, int maxConsumers, Duration maxRun,
            String... consumerProps) {
        this.clients = clients;
        this.group = group;
        this.topic = topic;
        this.consumerProps = consumerProps;
        this.deadlineNanos = System.nanoTime() + maxRun.toNanos();
        this.pool = Executors.newFixedThreadPool(maxConsumers);
    }

    /** Starts one more consumer; it subscribes and polls until stopped or the run's deadline. */
    Member start() {
        Member m = new Member(members.size());
        members.add(m);
        m.task = pool.submit(() -> runMember(m));
        return m;
    }

    /**
     * Polls, ACCEPTs every record and commits asynchronously; a record counts as accepted when
     * the acknowledgement commit callback reports its offset without an error (so a slow broker
     * answer is never mistaken for a failure, and nothing is counted that the broker refused).
     */
    private void runMember(Member m) {
        Map<String, ConsumerRecord<String, String>> pending = new java.util.HashMap<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit", consumerProps)) {
            consumer.setAcknowledgementCommitCallback((offsets, exception) -> offsets.forEach((tip, set) -> {
                for (Long offset : set) {
                    ConsumerRecord<String, String> r = pending.remove(tip.partition() + ":" + offset);
                    if (r == null) {
                        continue;
                    }
                    if (exception != null) {
                        ackFailures.add(r.value() + "@" + r.partition() + ":" + r.offset() + ": " + exception);
                    } else {
                        m.accepted.add(r);
                        acceptCounts.computeIfAbsent(r.value(), v -> new AtomicInteger()).incrementAndGet();
                        accepted.incrementAndGet();
                    }
                }
            }));
            m.startedNanos.set(System.nanoTime());
            consumer.subscribe(Set.of(topic));
            while (!m.stop.get() && System.nanoTime() < deadlineNanos && m.polls.get() < MAX_POLLS) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                m.polls.incrementAndGet();
                if (records.isEmpty()) {
                    continue;
                }
                m.firstRecordNanos.compareAndSet(-1, System.nanoTime());
                received.addAndGet(records.count());
                for (ConsumerRecord<String, String> r : records) {
                    pending.put(r.partition() + ":" + r.offset(), r);
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                consumer.commitAsync();
            }
        } catch (Throwable t) {
            errors.add(t);
        }
    }

    /** Stops one consumer and waits until it is closed. */
    void stop(Member m) throws Exception {
        m.stop.set(true);
        m.task.get(30, TimeUnit.SECONDS);
    }

    /** Waits until {@code expected} ACCEPTs were confirmed (or a consumer failed), at most {@code timeout}. */
    void awaitAccepted(int expected, Duration timeout) {
        try {
            org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(20))
                    .until(() -> accepted() >= expected || !errors.isEmpty());
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("only " + accepted() + " of " + expected + " records accepted within "
                    + timeout + " (" + received.get() + " received; ack failures " + ackFailures + "); per consumer " + members.stream().map(Member::count).toList(), e);
        }
        if (!errors.isEmpty()) {
            throw new AssertionError("a consumer failed", errors.get(0));
        }
    }

    /** Waits until every started consumer has returned from poll at least {@code polls} times. */
    void awaitPolling(int polls, Duration timeout) {
        org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> !errors.isEmpty() || members.stream().allMatch(m -> m.polls.get() >= polls));
        if (!errors.isEmpty()) {
            throw new AssertionError("a consumer failed", errors.get(0));
        }
    }

    List<Member> members() {
        return members;
    }

    /** Total number of confirmed ACCEPTs (counting duplicates). */
    int accepted() {
        return accepted.get();
    }

    /** Value -> number of times it was accepted, over every consumer. */
    Map<String, Integer> acceptCounts() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        acceptCounts.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    List<String> ackFailures() {
        return ackFailures;
    }

    List<Throwable> errors() {
        return errors;
    }

    @Override
    public void close() throws Exception {
        for (Member m : members) {
            m.stop.set(true);
        }
        List<Throwable> stuck = new ArrayList<>();
        for (Member m : members) {
            try {
                m.task.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                stuck.add(e);
            }
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        if (!stuck.isEmpty()) {
            throw new IllegalStateException("consumers did not stop: " + stuck);
        }
    }
}
