package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The load of the network-fault scenarios and what it saw: an idempotent producer and an
 * explicit-mode share consumer that ACCEPTs everything, both through the proxy, on partition 0 of
 * one topic. The checks read the log and the group's start offset on the direct listener, which
 * the faults do not reach.
 */
final class ProxiedShareLoad implements AutoCloseable {
    private final String proxied;
    private final String direct;
    private final String topic;
    private final String group;
    private final int records;
    private final int requestTimeoutMs;

    /** Offset to value of every record whose produce was acknowledged. */
    private final Map<Long, String> acked = new ConcurrentHashMap<>();
    /** Offset to the highest delivery count the consumer has seen for it. */
    private final Map<Long, Short> delivered = new ConcurrentHashMap<>();
    private final Set<Long> accepted = ConcurrentHashMap.newKeySet();
    private final Set<Long> refusedLate = ConcurrentHashMap.newKeySet();
    private final AtomicInteger refusedCommits = new AtomicInteger();
    /** Commits with no definite answer, by what the client said instead: their ACCEPTs may or may not count. */
    private final Map<String, Integer> unanswered = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private Thread producer;
    private Thread consumer;

    ProxiedShareLoad(String proxied, String direct, String topic, String group, int records, int requestTimeoutMs) {
        this.proxied = proxied;
        this.direct = direct;
        this.topic = topic;
        this.group = group;
        this.records = records;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    void start() {
        producer = new Thread(() -> produce(proxied, topic, records, acked, requestTimeoutMs), topic + "-producer");
        consumer = new Thread(this::consume, topic + "-consumer");
        producer.start();
        consumer.start();
    }

    boolean producing() {
        return producer.isAlive();
    }

    int delivered() {
        return delivered.size();
    }

    /** Commits whose ACCEPTs came back INVALID_RECORD_STATE: their locks had run out first. */
    int refusedCommits() {
        return refusedCommits.get();
    }

    /**
     * Waits for the producer, then until every acknowledged record was delivered and the group's
     * start offset reached the log end. An ACCEPT whose answer a fault took away may have been
     * applied, so that record never comes back: the start offset, not the confirmations, says
     * when the group is done. Stops the consumer.
     */
    void awaitSettled(Duration within) throws Exception {
        producer.join(within.toMillis());
        assertThat(producer.isAlive()).as("producer done").isFalse();
        long end = PartitionReader.readAll(direct, topic).size();
        await("every acknowledged record delivered and the share group at the log end").atMost(within)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    assertThat(violations).as("seen so far").isEmpty();
                    return delivered.keySet().containsAll(acked.keySet())
                            && PartitionReader.shareStartOffset(direct, group, topic) == end;
                });
        consumer.interrupt();
        consumer.join(30_000);
        assertThat(consumer.isAlive()).as("consumer stopped").isFalse();
    }

    /** Stops the clients if a check gave up on them, so that they do not outlive the test. */
    @Override
    public void close() {
        try {
            for (Thread t : new Thread[] {producer, consumer}) {
                if (t != null) {
                    t.interrupt();
                    t.join(30_000);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Every acknowledged record is in the log once with its value (the idempotent producer's
     * retries wrote nothing twice), no record came back after its ACCEPT was confirmed, and every
     * redelivery carried a higher delivery count than the delivery before it.
     */
    void assertInvariants() {
        assertThat(violations).isEmpty();
        Map<Long, String> log = PartitionReader.readAll(direct, topic);
        assertThat(log).as("every acknowledged record in the log, with its value").containsAllEntriesOf(acked);
        assertThat(new HashSet<>(log.values())).as("no record written twice").hasSize(log.size());
        assertThat(acked).as("every record acknowledged").hasSize(records);
    }

    /** Offsets whose late ACCEPT was refused, each delivered again later with a higher count. */
    Set<Long> refusedLate() {
        return Set.copyOf(refusedLate);
    }

    short highestDeliveryCount(long offset) {
        return delivered.getOrDefault(offset, (short) 0);
    }

    String summary() {
        int redelivered = (int) delivered.values().stream().filter(c -> c > 1).count();
        return String.format("%d records acknowledged, %d delivered (%d more than once), %d ACCEPTs confirmed,"
                + " %d ACCEPTs of %d commits refused as late; commits without a definite answer: %s", acked.size(),
                delivered.size(), redelivered, accepted.size(), refusedLate.size(), refusedCommits.get(), unanswered);
    }

    /** ACCEPTs everything it gets through the proxy, one commit per poll. */
    private void consume() {
        try (KafkaShareConsumer<String, String> c = shareConsumer(proxied, group, topic, requestTimeoutMs)) {
            while (!Thread.currentThread().isInterrupted()) {
                List<Long> sent = new ArrayList<>();
                try {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                        noteDelivery(r);
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        sent.add(r.offset());
                    }
                    if (sent.isEmpty()) {
                        continue;
                    }
                    Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofSeconds(5));
                    if (!result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty)) {
                        accepted.addAll(sent);
                    } else if (result.values().stream().anyMatch(
                            e -> e.isPresent() && e.get() instanceof InvalidRecordStateException)) {
                        // The broker refused them all (it applies a partition's acknowledgements
                        // all or nothing): those records are not settled and must come back.
                        refusedLate.addAll(sent);
                        refusedCommits.incrementAndGet();
                    } else {
                        unanswered.merge(result.isEmpty() ? "no result" : result.values().stream()
                                .flatMap(Optional::stream).map(e -> e.getClass().getSimpleName()).toList().toString(),
                                1, Integer::sum);
                    }
                } catch (KafkaException | IllegalStateException e) {
                    // a fault mid-request: those acknowledgements are indeterminate
                    if (e instanceof InterruptException) {
                        return;
                    }
                    unanswered.merge(e.getClass().getSimpleName(), 1, Integer::sum);
                }
            }
        }
    }

    private void noteDelivery(ConsumerRecord<String, String> r) {
        short count = r.deliveryCount().orElse((short) -1);
        if (accepted.contains(r.offset())) {
            violations.add("offset " + r.offset() + " delivered again (count " + count + ") after a confirmed ACCEPT");
        }
        Short before = delivered.put(r.offset(), count);
        if (before != null && count <= before) {
            violations.add("offset " + r.offset() + " delivered with count " + count + " after count " + before);
        }
    }

    /** An idempotent producer on {@code bootstrap}; notes each acknowledged record's offset and value. */
    static void produce(String bootstrap, String topic, int count, Map<Long, String> acked, int requestTimeoutMs) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "2");
        p.put("request.timeout.ms", String.valueOf(requestTimeoutMs));
        p.put("delivery.timeout.ms", "60000");
        p.put("reconnect.backoff.max.ms", "200");
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                String value = "v" + i;
                var unused = producer.send(new ProducerRecord<>(topic, 0, null, value), (md, e) -> {
                    if (e == null) {
                        acked.put(md.offset(), value);
                    }
                });
                // Frequent flushes keep requests small and many, so that faults land inside them.
                if (i % 50 == 0) {
                    producer.flush();
                }
            }
            producer.flush();
        }
    }

    static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group, String topic,
            int requestTimeoutMs) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("request.timeout.ms", String.valueOf(requestTimeoutMs));
        p.put("reconnect.backoff.max.ms", "200");
        KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(Set.of(topic));
        return consumer;
    }
}
