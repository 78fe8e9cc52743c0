package io.pier.it.soak;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Share consumers in one group (explicit acknowledgement) that ACCEPT most records and RELEASE or
 * REJECT some at random, and now and then hold a batch past its acquisition lock before
 * acknowledging it (the lock expires, the late acknowledgement must fail). Several consumers
 * share one {@link Oracle}; each runs until stopped, or until aborted as a dying process would be.
 */
final class ShareConsumeLoad implements Runnable {
    /** KafkaShareConsumer's own default for {@code close()}. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    /** What every consumer of the group saw and was told; the share-group invariants over it. */
    static final class Oracle {
        private final int deliveryLimit;
        private final Violations violations;
        /** Confirmed ACCEPT or REJECT: the record's state is final (I5). */
        private final Map<TopicPartition, Set<Long>> finished = new ConcurrentHashMap<>();
        /** Delivery counts seen per record: each acquisition has a count of its own (I7), within the limit (I6). */
        private final Map<TopicPartition, Map<Long, Set<Short>>> counts = new ConcurrentHashMap<>();
        private final AtomicLong deliveries = new AtomicLong();
        private final AtomicLong confirmedFinal = new AtomicLong();
        private final AtomicLong lateAcksRefused = new AtomicLong();
        private final Redeliveries redeliveries = new Redeliveries();
        private final DeadLetterOracle deadLetters;

        Oracle(int deliveryLimit, Violations violations, DeadLetterOracle deadLetters) {
            this.deliveryLimit = deliveryLimit;
            this.violations = violations;
            this.deadLetters = deadLetters;
        }

        void delivered(ConsumerRecord<String, String> r) {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            long offset = r.offset();
            short count = r.deliveryCount().orElse((short) -1);
            deliveries.incrementAndGet();
            if (finished.getOrDefault(tp, Set.of()).contains(offset)) {
                violations.add("I5", tp + "@" + offset + " delivered (count " + count + ") after a confirmed ACCEPT/REJECT");
            }
            if (count < 1 || count > deliveryLimit) {
                violations.add("I6", tp + "@" + offset + " delivered with count " + count + ", limit " + deliveryLimit);
            }
            Set<Short> seen = counts.computeIfAbsent(tp, k -> new ConcurrentHashMap<>())
                    .computeIfAbsent(offset, k -> ConcurrentHashMap.newKeySet());
            if (!seen.add(count)) {
                violations.add("I7", tp + "@" + offset + " delivered twice with count " + count);
            }
            redeliveries.delivered(tp, offset, count);
        }

        /** The acknowledgement of the delivery of {@code tp@offset} with {@code count} was confirmed. */
        void confirmed(TopicPartition tp, long offset, short count, AcknowledgeType type) {
            if (type == AcknowledgeType.ACCEPT) {
                deadLetters.accepted(tp, offset);
            } else {
                deadLetters.died(tp, offset, type == AcknowledgeType.REJECT, count);
            }
            outcome(tp, offset, count, type == AcknowledgeType.RELEASE ? Redeliveries.Outcome.RELEASED
                    : Redeliveries.Outcome.FINAL_CONFIRMED);
        }

        /** What became of the delivery of {@code tp@offset} with {@code count}. */
        void outcome(TopicPartition tp, long offset, short count, Redeliveries.Outcome outcome) {
            if (outcome == Redeliveries.Outcome.FINAL_CONFIRMED) {
                confirmedFinal(tp, offset);
            }
            redeliveries.outcome(tp, offset, count, outcome, violations);
        }

        /** The broker is about to crash: locks not confirmed before it go with it. */
        void crashing() {
            redeliveries.crashed();
        }

        /** I11 over the whole run, once the consumers have stopped; returns the redeliveries' summary. */
        String checkRedeliveries() {
            redeliveries.check(violations);
            return redeliveries.summary();
        }

        private void confirmedFinal(TopicPartition tp, long offset) {
            finished.computeIfAbsent(tp, k -> ConcurrentHashMap.newKeySet()).add(offset);
            confirmedFinal.incrementAndGet();
        }

        boolean wasDelivered(TopicPartition tp, long offset) {
            Map<Long, Set<Short>> m = counts.get(tp);
            return m != null && m.containsKey(offset);
        }

        long deliveries() {
            return deliveries.get();
        }

        long confirmedFinal() {
            return confirmedFinal.get();
        }

        long lateAcksRefused() {
            return lateAcksRefused.get();
        }
    }

    private final String bootstrap;
    private final String clientId;
    private final String group;
    private final String topic;
    private final long lockMs;
    private final Oracle oracle;
    private final Random random;
    private volatile boolean running = true;
    /** Set by {@link #abort}: the consumer closes without waiting for anything. */
    private volatile boolean aborted;

    ShareConsumeLoad(String bootstrap, String clientId, String group, String topic, long lockMs, Oracle oracle,
            long seed) {
        this.bootstrap = bootstrap;
        this.clientId = clientId;
        this.group = group;
        this.topic = topic;
        this.lockMs = lockMs;
        this.oracle = oracle;
        this.random = new Random(seed);
    }

    @Override
    public void run() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        try {
            consumer.subscribe(Set.of(topic));
            while (running) {
                pollOnce(consumer);
            }
        } finally {
            // An aborted consumer sends nothing more: no acknowledgement, no leave.
            consumer.close(aborted ? Duration.ZERO : CLOSE_TIMEOUT);
        }
    }

    /** An acknowledgement sent for one delivery. */
    private record Sent(short count, AcknowledgeType type) {}

    private void pollOnce(KafkaShareConsumer<String, String> consumer) {
        Map<TopicPartition, Map<Long, Sent>> sent = new HashMap<>();
        boolean late = false;
        try {
            var records = consumer.poll(Duration.ofMillis(100));
            for (ConsumerRecord<String, String> r : records) {
                oracle.delivered(r);
                int dice = random.nextInt(100);
                AcknowledgeType type = dice < 5 ? AcknowledgeType.RELEASE
                        : dice < 8 ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT;
                consumer.acknowledge(r, type);
                sent.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new HashMap<>())
                        .put(r.offset(), new Sent(r.deliveryCount().orElse((short) -1), type));
            }
            if (sent.isEmpty()) {
                return;
            }
            late = random.nextInt(100) == 0;
            if (late) {
                Thread.sleep(lockMs + 500); // the locks expire: these acknowledgements must be refused
            }
            Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(5));
            for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
                TopicPartition tp = e.getKey().topicPartition();
                Map<Long, Sent> acks = sent.remove(tp);
                if (acks == null) {
                    continue;
                }
                if (e.getValue().isPresent()) {
                    if (late) {
                        oracle.lateAcksRefused.incrementAndGet();
                    }
                    report(tp, acks, late ? Redeliveries.Outcome.HELD_PAST_LOCK : Redeliveries.Outcome.NOT_CONFIRMED);
                    continue;
                }
                // A late acknowledgement that succeeds (its expiry not yet processed) is final all the
                // same: any later delivery of those records is an I5 violation.
                acks.forEach((offset, ack) -> oracle.confirmed(tp, offset, ack.count(), ack.type()));
            }
        } catch (KafkaException | IllegalStateException e) {
            // the broker went away mid-request: these acknowledgements are indeterminate
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
        // What commitSync did not confirm, or never got to, stays unconfirmed.
        Redeliveries.Outcome unconfirmed = late ? Redeliveries.Outcome.HELD_PAST_LOCK : Redeliveries.Outcome.NOT_CONFIRMED;
        sent.forEach((tp, acks) -> report(tp, acks, unconfirmed));
    }

    private void report(TopicPartition tp, Map<Long, Sent> acks, Redeliveries.Outcome outcome) {
        acks.forEach((offset, ack) -> oracle.outcome(tp, offset, ack.count(), outcome));
    }

    void stop() {
        running = false;
    }

    /**
     * Ends the consumer as a process that dies would end it, as far as a thread can: it finishes
     * the poll or commit it is in (whose outcome it reports as ever), then closes at once, sending
     * no acknowledgement and not leaving the group. Whoever aborts it cuts its connections first
     * if the broker must not hear from it again.
     */
    void abort() {
        aborted = true;
        running = false;
    }

    String clientId() {
        return clientId;
    }
}
