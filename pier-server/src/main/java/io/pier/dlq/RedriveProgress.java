package io.pier.dlq;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A redrive's durable progress: per dead-letter partition and source group, the next dead-letter
 * offset to look at, kept as records keyed {@code <dlq topic>:<partition>:<group>} in a compacted
 * progress topic and written in the same transaction as the records they moved. Read back with
 * read_committed up to the high watermark, so a transaction another redrive left open is waited
 * for rather than read past.
 */
final class RedriveProgress {
    private final String progressTopic;
    private final String dlqTopic;
    private final Duration timeout;

    RedriveProgress(String progressTopic, String dlqTopic, Duration timeout) {
        this.progressTopic = progressTopic;
        this.dlqTopic = dlqTopic;
        this.timeout = timeout;
    }

    /** The record saying that the letters of {@code key} below {@code next} were moved. */
    ProducerRecord<byte[], byte[]> mark(String key, long next) {
        return new ProducerRecord<>(progressTopic, (dlqTopic + ":" + key).getBytes(StandardCharsets.UTF_8),
                Long.toString(next).getBytes(StandardCharsets.UTF_8));
    }

    /** The progress key of one dead-letter partition and source group (without the topic). */
    static String key(int dlqPartition, String group) {
        return dlqPartition + ":" + group;
    }

    /** Creates the progress topic (compacted, one partition) unless it exists. */
    void ensureTopic(Admin admin, Topics topics) {
        if (topics.partitions(progressTopic) >= 0) {
            return;
        }
        NewTopic topic = new NewTopic(progressTopic, Optional.of(1), Optional.empty())
                .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
        try {
            admin.createTopics(List.of(topic)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new RedriveException("cannot create the progress topic " + progressTopic + ": "
                        + e.getCause().getMessage(), e.getCause());
            }
        } catch (TimeoutException e) {
            throw new RedriveException("no answer creating the progress topic " + progressTopic + " within "
                    + timeout.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedriveException("interrupted", e);
        }
        topics.created(progressTopic, 1);
    }

    /**
     * The committed progress of this dead-letter topic: read_committed from the start of the
     * progress topic up to its high watermark as it is now, so a transaction still open there
     * (another redrive's) is waited for rather than read past.
     */
    Map<String, Long> read(Admin admin, Topics topics, Properties base) {
        Map<String, Long> out = new HashMap<>();
        int n = topics.partitions(progressTopic);
        if (n < 0) {
            return out; // a dry run before any redrive
        }
        List<TopicPartition> partitions = new ArrayList<>();
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (int p = 0; p < n; p++) {
            TopicPartition tp = new TopicPartition(progressTopic, p);
            partitions.add(tp);
            specs.put(tp, OffsetSpec.latest());
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> highWatermarks;
        try {
            highWatermarks = admin.listOffsets(specs).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new RedriveException("cannot read the progress topic " + progressTopic + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new RedriveException("no answer listing the offsets of " + progressTopic + " within "
                    + timeout.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedriveException("interrupted", e);
        }
        String prefix = dlqTopic + ":";
        Properties p = new Properties();
        p.putAll(base);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "pier-dlq-redrive-progress");
        // Another redrive's transaction may be open on the progress topic; it ends within its timeout.
        long waitNanos = timeout.toNanos() + TimeUnit.MILLISECONDS.toNanos(transactionTimeoutMs(base));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + waitNanos;
            while (!caughtUp(consumer, partitions, highWatermarks)) {
                if (System.nanoTime() > deadline) {
                    throw new RedriveException("the progress topic " + progressTopic + " has a transaction open for"
                            + " longer than " + TimeUnit.NANOSECONDS.toMillis(waitNanos)
                            + " ms (another redrive running?); try again later");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.key() == null) {
                        continue;
                    }
                    String key = new String(r.key(), StandardCharsets.UTF_8);
                    if (!key.startsWith(prefix)) {
                        continue;
                    }
                    String rest = key.substring(prefix.length());
                    if (r.value() == null) {
                        out.remove(rest);
                    } else {
                        try {
                            out.put(rest, Long.parseLong(new String(r.value(), StandardCharsets.UTF_8).trim()));
                        } catch (NumberFormatException e) {
                            throw new RedriveException("unreadable progress record at " + r.topic() + "-"
                                    + r.partition() + "@" + r.offset() + " for " + key, e);
                        }
                    }
                }
            }
        }
        return out;
    }

    private boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> highWatermarks) {
        for (TopicPartition tp : partitions) {
            if (consumer.position(tp, timeout) < highWatermarks.get(tp).offset()) {
                return false;
            }
        }
        return true;
    }

    private static final int DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;

    private static long transactionTimeoutMs(Properties base) {
        Object set = base.get(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);
        return set == null ? DEFAULT_TRANSACTION_TIMEOUT_MS : Long.parseLong(set.toString().trim());
    }

}
