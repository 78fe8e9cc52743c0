package io.pier.it.soak;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A consumer-group member (classic protocol) that reads the topic and calls {@code commitSync()}
 * after every poll, beside the share group on the same records. It notes the highest offset whose
 * commit was confirmed per partition: after any restart the group's committed offset is at least
 * that (committed offsets are durable before the commit is answered).
 */
final class GroupCommitLoad implements Runnable {
    private final String bootstrap;
    private final String group;
    private final String topic;
    private final Map<TopicPartition, Long> confirmed = new ConcurrentHashMap<>();
    private final AtomicLong commits = new AtomicLong();
    private volatile boolean running = true;

    GroupCommitLoad(String bootstrap, String group, String topic) {
        this.bootstrap = bootstrap;
        this.group = group;
        this.topic = topic;
    }

    @Override
    public void run() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", "classic");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "250");
        p.put("max.poll.records", "200");
        try (KafkaConsumer<String, String> consumer =
                new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (running) {
                try {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    if (records.isEmpty()) {
                        continue;
                    }
                    Map<TopicPartition, Long> positions = new HashMap<>();
                    for (TopicPartition tp : records.partitions()) {
                        positions.put(tp, consumer.position(tp));
                    }
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    positions.forEach((tp, pos) -> offsets.put(tp, new OffsetAndMetadata(pos, "soak")));
                    consumer.commitSync(offsets, Duration.ofSeconds(5));
                    positions.forEach((tp, pos) -> confirmed.merge(tp, pos, Math::max));
                    commits.incrementAndGet();
                } catch (KafkaException | IllegalStateException e) {
                    // the broker went away mid-commit: that commit is indeterminate
                }
            }
        }
    }

    void stop() {
        running = false;
    }

    long commits() {
        return commits.get();
    }

    /**
     * Checks the group's committed offsets, as Admin reads them, against the confirmed commits
     * noted before the read (later commits only raise them).
     */
    void check(Admin admin, Violations violations) throws Exception {
        Map<TopicPartition, Long> before = Map.copyOf(confirmed);
        Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        before.forEach((tp, offset) -> {
            OffsetAndMetadata now = committed.get(tp);
            if (now == null || now.offset() < offset) {
                violations.add("committed offsets", group + " " + tp + " at " + (now == null ? "none" : now.offset())
                        + " after a confirmed commit of " + offset);
            } else if (!"soak".equals(now.metadata())) {
                violations.add("committed offsets", group + " " + tp + " lost its metadata: " + now.metadata());
            }
        });
    }
}
