package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Share groups with {@code share.isolation.level=read_committed} (KIP-932), with the real 4.4
 * clients: a read_committed group gets exactly the committed records of interleaved committed
 * and aborted transactions, a read_uncommitted group every data record but no marker, and an
 * open transaction holds a read_committed group back until it commits.
 */
@Timeout(180)
class ShareReadCommittedIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldGiveReadCommittedGroupsOnlyCommittedRecordsOfHundredTransactions() throws Exception {
        // Given 100 transactions of 10 records on one partition, every odd one aborted
        String topic = "share-rc-half";
        clients.createTopic(topic, 1);
        clients.setGroupConfigs("g-rc-half", "share.auto.offset.reset", "earliest",
                "share.isolation.level", "read_committed");
        clients.setGroupConfigs("g-ru-half", "share.auto.offset.reset", "earliest");
        Set<String> committed = new HashSet<>();
        Set<String> all = new HashSet<>();
        try (KafkaProducer<String, String> p = clients.producer("transactional.id", "share-rc-half-producer")) {
            p.initTransactions();
            for (int t = 0; t < 100; t++) {
                boolean commit = t % 2 == 0;
                p.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    String value = (commit ? "commit-" : "abort-") + t + "-" + i;
                    sent.add(p.send(new ProducerRecord<>(topic, 0, null, value)));
                    all.add(value);
                    if (commit) {
                        committed.add(value);
                    }
                }
                // flushed first, so an aborted transaction really left its records in the log
                p.flush();
                for (Future<RecordMetadata> f : sent) {
                    assertThat(f.get().hasOffset()).isTrue();
                }
                if (commit) {
                    p.commitTransaction();
                } else {
                    p.abortTransaction();
                }
            }
        }

        // When a read_committed and a read_uncommitted share group each read the whole partition
        List<ConsumerRecord<String, String>> rc = readAndAccept("g-rc-half", topic, committed.size());
        List<ConsumerRecord<String, String>> ru = readAndAccept("g-ru-half", topic, all.size());

        // Then the read_committed group got the 500 committed records once each, none aborted
        assertThat(ShareClients.values(rc)).doesNotHaveDuplicates().hasSize(500)
                .containsExactlyInAnyOrderElementsOf(committed);
        // and the read_uncommitted one every data record once, and no marker (100 of the 1100 offsets)
        assertThat(ShareClients.values(ru)).doesNotHaveDuplicates().hasSize(1000)
                .containsExactlyInAnyOrderElementsOf(all);
        Set<Long> offsets = new HashSet<>();
        ru.forEach(r -> offsets.add(r.offset()));
        assertThat(offsets).hasSize(1000);
        assertThat(rc).allSatisfy(r -> assertThat(offsets).contains(r.offset()));
    }

    @Test
    void shouldHoldReadCommittedGroupsBackUntilAnOpenTransactionCommits() throws Exception {
        // Given 5 plain records, an open transaction of 10, then 5 more plain records
        String topic = "share-rc-open";
        clients.createTopic(topic, 1);
        clients.setGroupConfigs("g-rc-open", "share.auto.offset.reset", "earliest",
                "share.isolation.level", "read_committed");
        clients.setGroupConfigs("g-ru-open", "share.auto.offset.reset", "earliest");
        clients.produce(topic, 0, "before", 5);
        try (KafkaProducer<String, String> txn = clients.producer("transactional.id", "share-rc-open-producer");
                KafkaShareConsumer<String, String> rc = clients.consumer("g-rc-open", "explicit");
                KafkaShareConsumer<String, String> ru = clients.consumer("g-ru-open", "explicit")) {
            txn.initTransactions();
            txn.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add(txn.send(new ProducerRecord<>(topic, 0, null, "open-" + i)));
            }
            txn.flush();
            for (Future<RecordMetadata> f : sent) {
                assertThat(f.get().hasOffset()).isTrue();
            }
            clients.produce(topic, 0, "after", 5);
            rc.subscribe(Set.of(topic));
            ru.subscribe(Set.of(topic));

            // When both groups read while the transaction is open
            List<ConsumerRecord<String, String>> uncommitted =
                    ShareClients.pollAndAck(ru, 20, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            List<ConsumerRecord<String, String>> early =
                    ShareClients.pollAndAck(rc, 5, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            // (keep polling a while: nothing past the last stable offset may come)
            early.addAll(ShareClients.pollAndAck(rc, Integer.MAX_VALUE, Duration.ofSeconds(3),
                    AcknowledgeType.ACCEPT));

            // Then the read_uncommitted group sees everything, the read_committed one only what precedes it
            assertThat(ShareClients.values(uncommitted)).hasSize(20)
                    .contains("open-0", "open-9", "after-0", "after-4");
            assertThat(ShareClients.values(early))
                    .containsExactly("before-0", "before-1", "before-2", "before-3", "before-4");

            // When the transaction commits
            txn.commitTransaction();

            // Then its records, and those after it, reach the read_committed group
            List<ConsumerRecord<String, String>> late =
                    ShareClients.pollAndAck(rc, 15, Duration.ofSeconds(30), AcknowledgeType.ACCEPT);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                expected.add("open-" + i);
            }
            for (int i = 0; i < 5; i++) {
                expected.add("after-" + i);
            }
            assertThat(ShareClients.values(late)).containsExactlyElementsOf(expected);
        }
    }

    /**
     * Reads {@code topic} in {@code group} until {@code expected} records came (and then a little
     * longer, so extra or repeated ones would show), accepting each; then waits for the group's
     * start offset to reach the partition's end: aborted records and markers do not hold it back.
     */
    private List<ConsumerRecord<String, String>> readAndAccept(String group, String topic, int expected)
            throws Exception {
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            List<ConsumerRecord<String, String>> got =
                    ShareClients.pollAndAck(consumer, expected, Duration.ofSeconds(60), AcknowledgeType.ACCEPT);
            got.addAll(ShareClients.pollAndAck(consumer, Integer.MAX_VALUE, Duration.ofSeconds(2),
                    AcknowledgeType.ACCEPT));
            TopicPartition tp = new TopicPartition(topic, 0);
            try (Admin admin = clients.admin()) {
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    SharePartitionOffsetInfo info = admin.listShareGroupOffsets(
                                    Map.of(group, new ListShareGroupOffsetsSpec()))
                            .partitionsToOffsetInfo(group).get().get(tp);
                    assertThat(info).isNotNull();
                    assertThat(info.startOffset()).as("start offset of %s", group).isEqualTo(1100);
                    assertThat(info.lag()).contains(0L);
                });
            }
            return got;
        }
    }
}
