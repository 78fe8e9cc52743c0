package io.pier.it.share;

import static io.pier.it.PierCli.pier;
import static io.pier.it.share.ShareClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.dlq.DeadLetterRedrive;
import io.pier.dlq.RedriveException;
import io.pier.dlq.RedriveListener;
import io.pier.dlq.RedriveOutcome;
import io.pier.dlq.RedriveResult;
import io.pier.it.PierCli.Run;
import io.pier.testkit.PierExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Redriving dead letters (io.pier.dlq, {@code pier dlq redrive}) with the stock clients: letters
 * made by a real KafkaShareConsumer rejecting records go back to their source partition, whole,
 * once, and the share group receives them again.
 */
@Timeout(180)
class DeadLetterRedriveIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.min.record.lock.duration.ms", "1000",
            "group.share.record.lock.duration.ms", "2000");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void copiedLettersGoBackThroughTheCliOnceAndTheGroupGetsThemAgain() throws Exception {
        makeLetters("dlq.copy", "copy-src", "g-copy", true, List.of("ok-0", "bad-1", "ok-2", "bad-3"));
        TopicPartition src = new TopicPartition("copy-src", 0);

        Run dry = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.copy",
                "--dry-run");
        assertThat(dry.code()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("would move dlq.copy-0@0 group g-copy from copy-src-0@1 (copy) -> copy-src-0")
                .contains("would move dlq.copy-0@1 group g-copy from copy-src-0@3 (copy) -> copy-src-0")
                .contains("Dry run of dlq.copy (nothing written): would move 2, skipped 0");
        assertThat(endOffset(src)).as("a dry run writes nothing").isEqualTo(4);

        Run real = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.copy");
        assertThat(real.code()).as(real.out() + real.err()).isZero();
        assertThat(real.out()).contains("Redrive of dlq.copy: moved 2, skipped 0 (other groups 0, already moved 0), failed 0");
        long after = endOffset(src);
        List<ConsumerRecord<byte[], byte[]>> back = readToEnd(src, 4, true);
        assertThat(back).extracting(r -> utf8(r.key())).containsExactly("key-bad-1", "key-bad-3");
        assertThat(back).extracting(r -> utf8(r.value())).containsExactly("bad-1", "bad-3");
        for (ConsumerRecord<byte[], byte[]> r : back) {
            assertThat(headers(r)).as("original headers only").containsExactly(Map.entry("origin", "test"));
        }

        assertThat(receiveAgain("g-copy", "copy-src", 2)).containsExactly("bad-1", "bad-3");

        Run again = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.copy");
        assertThat(again.code()).isZero();
        assertThat(again.out()).contains("moved 0, skipped 2 (other groups 0, already moved 2), failed 0");
        assertThat(endOffset(src)).as("nothing written").isEqualTo(after);
    }

    @Test
    void lettersWithoutACopyAreReadBackFromTheSourceWithTheirTimestamps() throws Exception {
        makeLetters("dlq.nocopy", "nocopy-src", "g-nocopy", false, List.of("bad-0", "ok-1", "bad-2"));
        TopicPartition src = new TopicPartition("nocopy-src", 0);
        List<ConsumerRecord<byte[], byte[]>> originals = readToEnd(src, 0, false);
        List<ConsumerRecord<byte[], byte[]>> letters = readToEnd(new TopicPartition("dlq.nocopy", 0), 0, false);
        assertThat(letters).hasSize(2);
        assertThat(letters).allSatisfy(l -> assertThat(l.value()).isNull());

        List<RedriveOutcome> outcomes = new ArrayList<>();
        RedriveResult result = redrive("dlq.nocopy").listener(collect(outcomes)).build().run();

        assertThat(result.moved()).isEqualTo(2);
        assertThat(result.failed()).isZero();
        assertThat(outcomes).extracting(RedriveOutcome::status).containsOnly(RedriveOutcome.Status.MOVED);
        assertThat(outcomes).extracting(RedriveOutcome::fromCopy).containsOnly(false);
        assertThat(outcomes).extracting(RedriveOutcome::targetOffset).containsExactly(3L, 4L);
        long after = endOffset(src);
        List<ConsumerRecord<byte[], byte[]>> back = readToEnd(src, 3, true);
        assertThat(back).extracting(r -> utf8(r.key())).containsExactly("key-bad-0", "key-bad-2");
        assertThat(back).extracting(r -> utf8(r.value())).containsExactly("bad-0", "bad-2");
        assertThat(back).extracting(ConsumerRecord::timestamp)
                .containsExactly(originals.get(0).timestamp(), originals.get(2).timestamp());
        assertThat(headers(back.get(0))).containsExactly(Map.entry("origin", "test"));

        assertThat(receiveAgain("g-nocopy", "nocopy-src", 2)).containsExactly("bad-0", "bad-2");

        RedriveResult again = redrive("dlq.nocopy").build().run();
        assertThat(again.moved()).isZero();
        assertThat(again.skippedAlreadyMoved()).isEqualTo(2);
        assertThat(endOffset(src)).isEqualTo(after);
    }

    @Test
    void groupFilterAndMaxNeverMoveALetterTwice() throws Exception {
        makeLetters("dlq.shared", "shared-a", "g-a", true, List.of("bad-a0", "bad-a1", "ok", "bad-a2"));
        makeLetters(null, "shared-b", "g-b", true, List.of("bad-b0", "bad-b1"), "dlq.shared", 5);
        TopicPartition a = new TopicPartition("shared-a", 0);
        TopicPartition b = new TopicPartition("shared-b", 0);

        RedriveResult one = redrive("dlq.shared").group("g-a").maxRecords(1).build().run();
        assertThat(one.moved()).isEqualTo(1);
        assertThat(one.maxReached()).isTrue();
        assertThat(values(readToEnd(a, 4, true))).containsExactly("bad-a0");

        RedriveResult restOfA = redrive("dlq.shared").group("g-a").build().run();
        assertThat(restOfA.moved()).isEqualTo(2);
        assertThat(restOfA.skippedOtherGroup()).isEqualTo(2);
        assertThat(endOffset(b)).as("the other group's letters stay").isEqualTo(2);
        assertThat(values(readToEnd(a, 4, true))).containsExactly("bad-a0", "bad-a1", "bad-a2");

        Run all = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.shared");
        assertThat(all.code()).as(all.err()).isZero();
        assertThat(all.out()).contains("moved 2, skipped 3 (other groups 0, already moved 3), failed 0");

        RedriveResult none = redrive("dlq.shared").build().run();
        assertThat(none.moved()).isZero();
        assertThat(none.skippedAlreadyMoved()).isEqualTo(5);

        assertThat(values(readToEnd(a, 4, true))).containsExactly("bad-a0", "bad-a1", "bad-a2");
        assertThat(values(readToEnd(b, 2, true))).containsExactly("bad-b0", "bad-b1");
    }

    @Test
    void letterWithoutACopyWhoseRecordWasDeletedIsReportedFailed() throws Exception {
        makeLetters("dlq.gone", "gone-src", "g-gone", false, List.of("bad-0", "bad-1", "ok-2"));
        TopicPartition src = new TopicPartition("gone-src", 0);
        try (Admin admin = clients.admin()) {
            admin.deleteRecords(Map.of(src, RecordsToDelete.beforeOffset(2))).all().get();
        }

        Run run = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.gone");
        assertThat(run.code()).as("a failed letter fails the command").isEqualTo(1);
        assertThat(run.out()).contains("FAILED dlq.gone-0@0 group g-gone from gone-src-0@0: offset 0 is below the log"
                + " start offset 2 of gone-src-0")
                .contains("FAILED dlq.gone-0@1 group g-gone from gone-src-0@1")
                .contains("Redrive of dlq.gone: moved 0, skipped 0 (other groups 0, already moved 0), failed 2");
        assertThat(endOffset(src)).isEqualTo(3);
    }

    @Test
    void missingDeadLetterTopicAndBadUsageFailClearly() {
        assertThatThrownBy(() -> redrive("dlq.none").build().run()).isInstanceOf(RedriveException.class)
                .hasMessage("the dead-letter topic dlq.none does not exist");
        Run missing = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers(), "--dlq-topic", "dlq.none");
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("the dead-letter topic dlq.none does not exist");
        Run usage = pier("dlq", "redrive", "--bootstrap-server", PIER.bootstrapServers());
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.err()).contains("--dlq-topic");
        assertThat(pier("dlq", "redrive", "--bootstrap-server", "x:1", "--dlq-topic", "d", "--max", "0").code())
                .isEqualTo(2);
    }

    @Test
    void crashesMidRunMoveNothingTwice() throws Exception {
        makeLetters("dlq.crash", "crash-src", "g-crash", true, List.of("bad-0", "bad-1", "bad-2", "bad-3"));
        TopicPartition src = new TopicPartition("crash-src", 0);

        // A run that died inside a transaction: its record is written but never committed.
        KafkaProducer<String, String> zombie = clients.producer("transactional.id",
                DeadLetterRedrive.TRANSACTIONAL_ID_PREFIX + "dlq.crash");
        try {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>("crash-src", 0, "key-bad-0", "zombie")).get();

            // A run that dies after its second transaction.
            int[] moved = {0};
            RedriveListener dies = new RedriveListener() {
                @Override
                public void outcome(RedriveOutcome o) {
                    if (o.status() == RedriveOutcome.Status.MOVED && ++moved[0] == 2) {
                        throw new IllegalStateException("crash");
                    }
                }
            };
            assertThatThrownBy(() -> redrive("dlq.crash").lettersPerTransaction(1).listener(dies).build().run())
                    .hasMessage("crash");
            assertThatThrownBy(zombie::commitTransaction).as("the zombie was fenced").isInstanceOf(KafkaException.class);
        } finally {
            zombie.close(Duration.ofSeconds(5));
        }

        RedriveResult rest = redrive("dlq.crash").build().run();
        assertThat(rest.moved()).isEqualTo(2);
        assertThat(rest.skippedAlreadyMoved()).isEqualTo(2);

        List<String> committed = values(readToEnd(src, 0, true));
        assertThat(committed).containsExactly("bad-0", "bad-1", "bad-2", "bad-3", "bad-0", "bad-1", "bad-2", "bad-3");
    }

    // ---- helpers

    private DeadLetterRedrive.Builder redrive(String dlq) {
        return DeadLetterRedrive.builder(PIER.bootstrapServers(), dlq).timeout(Duration.ofSeconds(20));
    }

    private static RedriveListener collect(List<RedriveOutcome> into) {
        return new RedriveListener() {
            @Override
            public void outcome(RedriveOutcome o) {
                into.add(o);
            }
        };
    }

    private void makeLetters(String dlq, String topic, String group, boolean copy, List<String> values) throws Exception {
        makeLetters(dlq, topic, group, copy, values, dlq, (int) values.stream().filter(v -> v.startsWith("bad")).count());
    }

    /**
     * Creates {@code topic} for {@code group} (and the dead-letter topic {@code createDlq} unless
     * null), produces {@code values} keyed "key-" + value with header origin=test, has a share
     * consumer REJECT those starting with "bad" and ACCEPT the others, then waits until
     * {@code dlq} holds {@code lettersInDlq} letters.
     */
    private void makeLetters(String createDlq, String topic, String group, boolean copy, List<String> values,
            String dlq, int lettersInDlq) throws Exception {
        if (createDlq != null) {
            try (Admin admin = clients.admin()) {
                admin.createTopics(List.of(new NewTopic(createDlq, 1, (short) 1)
                        .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get();
            }
        }
        clients.createTopicReadFromEarliest(topic, 1, group, "errors.deadletterqueue.topic.name", dlq,
                "errors.deadletterqueue.copy.record.enable", Boolean.toString(copy));
        try (KafkaProducer<String, String> producer = clients.producer()) {
            for (String v : values) {
                ProducerRecord<String, String> r = new ProducerRecord<>(topic, 0, "key-" + v, v);
                r.headers().add("origin", "test".getBytes(StandardCharsets.UTF_8));
                producer.send(r).get();
            }
        }
        int[] seen = {0};
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            pollUntil(consumer, Duration.ofSeconds(30), () -> seen[0] >= values.size(), r -> {
                seen[0]++;
                consumer.acknowledge(r, r.value().startsWith("bad") ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
            });
        }
        assertThat(seen[0]).isEqualTo(values.size());
        TopicPartition letters = new TopicPartition(dlq, 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> endOffset(letters) >= lettersInDlq);
    }

    /** The share group polls (ACCEPTing) until it got {@code count} records; their values. */
    private List<String> receiveAgain(String group, String topic, int count) {
        List<String> got = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            pollUntil(consumer, Duration.ofSeconds(30), () -> got.size() >= count, r -> {
                got.add(r.value());
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            });
        }
        return got;
    }

    private long endOffset(TopicPartition tp) throws Exception {
        try (Admin admin = clients.admin()) {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    private static List<String> values(List<ConsumerRecord<byte[], byte[]>> records) {
        return records.stream().map(r -> utf8(r.value())).toList();
    }

    /** The records of {@code tp} from {@code from} to its end offset as it is now (markers take offsets too). */
    private List<ConsumerRecord<byte[], byte[]>> readToEnd(TopicPartition tp, long from, boolean readCommitted)
            throws Exception {
        long end = endOffset(tp);
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("isolation.level", readCommitted ? "read_committed" : "read_uncommitted");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, from);
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            for (int polls = 0; consumer.position(tp) < end && System.nanoTime() < deadline && polls < 1000; polls++) {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
            }
        }
        return out;
    }

    private static Map<String, String> headers(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            out.put(h.key(), h.value() == null ? null : utf8(h.value()));
        }
        return out;
    }

    private static String utf8(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
