package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.ManualAgentRunner;
import io.pier.common.ManualClock;
import io.pier.common.Wakeup;
import io.pier.gateway.KafkaShareStateLog;
import io.pier.it.faults.FaultyProxy;
import io.pier.testkit.UpstreamKafka;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The share-state log contract on a partition of a real Kafka topic ({@link KafkaShareStateLog}
 * against {@link UpstreamKafka}), plus what is particular to it: a second writer with the same
 * transactional id fences the first, and a persister's state survives a reopen on the upstream.
 * One upstream for the class; each test has a topic of its own.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KafkaShareStateLogIT extends ShareStateLogContract {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().proxiedListeners(1).build();

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int PARTITION = 1;
    private static final AtomicInteger TOPICS = new AtomicInteger();

    private String topic;

    @BeforeEach
    void createTopic() throws IOException {
        topic = "share-state-" + TOPICS.incrementAndGet();
        assertThat(KafkaShareStateLog.createTopicIfMissing(UPSTREAM.clientConfig(), topic, 2, TIMEOUT)).isEqualTo(2);
    }

    @Override
    protected ShareStateLog openBackend() throws IOException {
        return open();
    }

    private KafkaShareStateLog open() throws IOException {
        return KafkaShareStateLog.open(UPSTREAM.clientConfig(), topic, PARTITION, "pier-state-" + topic, TIMEOUT);
    }

    @Override
    protected int offsetsTakenByClose() {
        return 1; // the commit marker of the transaction the last flush left open
    }

    @Override
    protected boolean supportsDamage() {
        return false;
    }

    @Override
    protected void tearTail() {
        throw new UnsupportedOperationException("the upstream guards its own bytes");
    }

    @Override
    protected void flipFlushedByte() {
        throw new UnsupportedOperationException("the upstream guards its own bytes");
    }

    private static List<ShareStateLog.Entry> entries(String prefix, int count) {
        List<ShareStateLog.Entry> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new ShareStateLog.Entry((prefix + "-key-" + i).getBytes(StandardCharsets.UTF_8),
                    (prefix + "-value-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** A replayed record as text: "offset key=value". */
    private static List<String> replay(ShareStateLog log) throws IOException {
        List<String> out = new ArrayList<>();
        log.replay((offset, key, value) -> out.add(offset + " " + text(key) + "=" + (value == null ? null : text(value))));
        return out;
    }

    private static String text(ByteBuffer b) {
        return StandardCharsets.UTF_8.decode(b.duplicate()).toString();
    }

    private long upstreamStableEnd(Admin admin) throws Exception {
        TopicPartition tp = new TopicPartition(topic, PARTITION);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                new ListOffsetsOptions(org.apache.kafka.common.IsolationLevel.READ_COMMITTED)).partitionResult(tp)
                .get(10, TimeUnit.SECONDS).offset();
    }

    private long upstreamLogEnd(Admin admin) throws Exception {
        TopicPartition tp = new TopicPartition(topic, PARTITION);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
    }

    @Test
    void shouldCreateTheTopicWithDeletePolicyAndUnlimitedRetention() throws Exception {
        try (Admin admin = Admin.create(UPSTREAM.clientConfig())) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            assertThat(config.get("cleanup.policy").value()).isEqualTo("delete");
            assertThat(config.get("retention.ms").value()).isEqualTo("-1");
            assertThat(config.get("retention.bytes").value()).isEqualTo("-1");
            assertThat(config.get("min.insync.replicas").value()).as("one upstream broker").isEqualTo("1");
            assertThat(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions())
                    .allSatisfy(p -> assertThat(p.replicas()).hasSize(1));
        }
        // An existing topic is left as it is, and its partition count is what comes back
        assertThat(KafkaShareStateLog.createTopicIfMissing(UPSTREAM.clientConfig(), topic, 5, TIMEOUT)).isEqualTo(2);
    }

    @Test
    void shouldFenceTheEarlierWriterWithTheSameTransactionalId() throws Exception {
        try (KafkaShareStateLog a = open()) {
            // Given A flushed three records
            assertThat(a.append(entries("flushed", 3))).isZero();
            a.flush();

            // When B opens the same partition with the same transactional id
            try (KafkaShareStateLog b = open()) {
                assertThat(b.endOffset()).as("three records and the marker of A's transaction, which B's open aborted")
                        .isEqualTo(4);

                // Then A's next append and flush fail (the upstream refuses A's records: B's open
                // bumped the producer epoch), and so does everything after
                a.append(entries("after-fence", 2));
                assertThatThrownBy(a::flush).isInstanceOf(IOException.class)
                        .hasMessageContaining("upstream topic " + topic + " partition 1")
                        .hasRootCauseInstanceOf(InvalidProducerEpochException.class);
                assertThatThrownBy(() -> a.append(entries("later", 1))).isInstanceOf(IOException.class)
                        .hasMessageContaining("failed earlier");

                // and B replays A's flushed records and none of its later ones, and writes after them
                assertThat(replay(b)).containsExactly(
                        "0 flushed-key-0=flushed-value-0", "1 flushed-key-1=flushed-value-1",
                        "2 flushed-key-2=flushed-value-2");
                assertThat(b.append(entries("b", 1))).isEqualTo(4);
                b.flush();
                assertThat(replay(b)).hasSize(4).last().isEqualTo("4 b-key-0=b-value-0");
            }
        }
    }

    @Test
    void shouldFenceTheEarlierWriterAndReplayWhatItsAbortedTransactionHeld() throws Exception {
        try (KafkaShareStateLog a = open(); Admin admin = Admin.create(UPSTREAM.clientConfig())) {
            // Given A flushed three records (acknowledged, its transaction still open), then
            // appended two more that reached the upstream without a flush
            assertThat(a.append(entries("flushed", 3))).isZero();
            a.flush();
            assertThat(a.endOffset()).as("three records, no marker yet: the transaction spans flushes").isEqualTo(3);
            assertThat(upstreamStableEnd(admin)).as("A's transaction is open").isZero();
            assertThat(a.append(entries("sent", 2))).isEqualTo(3);
            long deadline = System.currentTimeMillis() + 10_000;
            while (upstreamLogEnd(admin) < 5 && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertThat(upstreamLogEnd(admin)).isEqualTo(5);

            // When B opens the same partition with the same transactional id
            try (KafkaShareStateLog b = open()) {
                // Then A's open transaction was aborted (its marker at 5), and B appends after it
                assertThat(b.startOffset()).isZero();
                assertThat(b.endOffset()).isEqualTo(6);

                // and A can no longer write: its next record is refused, its flush fails, and all after it
                a.append(entries("after-fence", 1));
                assertThatThrownBy(a::flush).isInstanceOf(IOException.class)
                        .hasMessageContaining("upstream topic " + topic + " partition 1")
                        .hasRootCauseInstanceOf(InvalidProducerEpochException.class);
                assertThatThrownBy(() -> a.append(entries("later", 1))).isInstanceOf(IOException.class)
                        .hasMessageContaining("failed earlier");

                // and B replays what A flushed (acknowledged, so durable though its transaction
                // was aborted), and what A sent unflushed, which the contract lets survive
                assertThat(replay(b)).containsExactly(
                        "0 flushed-key-0=flushed-value-0", "1 flushed-key-1=flushed-value-1",
                        "2 flushed-key-2=flushed-value-2", "3 sent-key-0=sent-value-0", "4 sent-key-1=sent-value-1");
                assertThat(b.append(entries("b", 1))).isEqualTo(6);
                b.flush();
            }
        }
        try (KafkaShareStateLog c = open()) {
            assertThat(replay(c)).hasSize(6).last().isEqualTo("6 b-key-0=b-value-0");
            assertThat(c.endOffset()).as("B's record and its commit on close").isEqualTo(8);
        }
    }

    @Test
    void shouldKeepWhatAFencedWriterFlushedBeforeTheFence() throws Exception {
        try (KafkaShareStateLog a = open()) {
            // Given A flushed two records into its still open transaction
            assertThat(a.append(entries("acked", 2))).isZero();
            a.flush();

            // When B opens the same partition (aborting A's transaction)
            try (KafkaShareStateLog b = open()) {
                // Then B replays both: acknowledged with acks=all, they were durable before the fence
                assertThat(replay(b)).containsExactly("0 acked-key-0=acked-value-0", "1 acked-key-1=acked-value-1");

                // and A's next write is refused as lost (another writer took the partition over)
                a.append(entries("after-fence", 1));
                assertThatThrownBy(a::flush).isInstanceOf(KafkaShareStateLog.LostException.class)
                        .hasMessageContaining("upstream topic " + topic + " partition 1");
            }
        }
    }

    @Test
    void shouldKeepOffsetsConsecutiveForAppendsThatSpanTheCommitIntervalBeforeAFlush() throws Exception {
        // Given a commit interval of 100 ms (a quarter of a 400 ms transaction timeout)
        Map<String, Object> config = new java.util.HashMap<>(UPSTREAM.clientConfig());
        config.put("transaction.timeout.ms", 400);
        try (KafkaShareStateLog a = KafkaShareStateLog.open(config, topic, PARTITION, "pier-state-" + topic, TIMEOUT)) {
            // When two appends, the second past the interval, come before one flush
            assertThat(a.append(entries("first", 2))).isZero();
            Thread.sleep(150);
            assertThat(a.append(entries("second", 1))).isEqualTo(2);

            // Then the flush finds every record where its append said (no commit came between them)
            a.flush();
            assertThat(a.endOffset()).isEqualTo(3);
        }
        try (KafkaShareStateLog b = open()) {
            assertThat(replay(b)).containsExactly("0 first-key-0=first-value-0", "1 first-key-1=first-value-1",
                    "2 second-key-0=second-value-0");
        }
    }

    @Test
    void shouldCommitAnOpenTransactionOnASyncWithNothingNew() throws Exception {
        try (KafkaShareStateLog a = open(); Admin admin = Admin.create(UPSTREAM.clientConfig())) {
            // Given A flushed two records, leaving its transaction open, and asks for a sync
            assertThat(a.append(entries("synced", 2))).isZero();
            a.flush();
            assertThat(a.syncWithinMs()).isEqualTo(1_000);
            assertThat(upstreamStableEnd(admin)).isZero();

            // When A flushes with nothing appended
            a.flush();

            // Then the transaction is committed: its marker at 2, nothing more to sync
            assertThat(a.endOffset()).isEqualTo(3);
            assertThat(a.syncWithinMs()).isEqualTo(Long.MAX_VALUE);
            long deadline = System.currentTimeMillis() + 10_000;
            while (upstreamStableEnd(admin) < 3 && System.currentTimeMillis() < deadline) {
                Thread.sleep(10);
            }
            assertThat(upstreamStableEnd(admin)).isEqualTo(3);
        }
    }

    @Test
    void shouldReportAFenceOnTheCommitOfATransactionTheNextWriterAborted() throws Exception {
        try (KafkaShareStateLog a = open()) {
            // Given A flushed two records into its open transaction
            assertThat(a.append(entries("open", 2))).isZero();
            a.flush();

            // When B opens the same partition (aborting A's transaction) and A then commits, sending nothing new
            try (KafkaShareStateLog b = open()) {
                // Then A's sync fails as fenced: with transaction version 2 the coordinator takes
                // A's commit for a retry of the abort that fenced it and answers INVALID_TXN_STATE
                // (not PRODUCER_FENCED), which means the same here: another writer took over
                assertThatThrownBy(a::flush).isInstanceOf(KafkaShareStateLog.LostException.class)
                        .hasMessageContaining("upstream topic " + topic + " partition 1")
                        .hasRootCauseInstanceOf(ProducerFencedException.class);
                // and B replays A's two records: acknowledged before the fence, they were durable
                assertThat(replay(b)).hasSize(2);
            }
        }
    }

    @Test
    void shouldReportATransactionTheUpstreamAbortedOnItsTimeoutAsLost() throws Exception {
        Map<String, Object> config = new java.util.HashMap<>(UPSTREAM.clientConfig());
        config.put("transaction.timeout.ms", 1000);
        try (KafkaShareStateLog a = KafkaShareStateLog.open(config, topic, PARTITION, "pier-state-" + topic, TIMEOUT);
                Admin admin = Admin.create(UPSTREAM.clientConfig())) {
            // Given A appended two records, then wrote nothing within its transaction timeout
            assertThat(a.append(entries("open", 2))).isZero();
            long deadline = System.currentTimeMillis() + 30_000;
            while (upstreamStableEnd(admin) < 3 && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            assertThat(upstreamStableEnd(admin)).as("the upstream aborted A's transaction (its marker at 2)")
                    .isEqualTo(3);

            // When A flushes: its two records were acknowledged, so the flush stands (a replay
            // reads them, aborted or not), but its next append, which commits the old
            // transaction first, fails as lost: the upstream ended it
            a.flush();
            assertThatThrownBy(() -> a.append(entries("after-timeout", 1)))
                    .isInstanceOf(KafkaShareStateLog.LostException.class)
                    .hasMessageContaining("upstream topic " + topic + " partition 1")
                    .hasRootCauseInstanceOf(org.apache.kafka.common.errors.InvalidTxnStateException.class);
        }
        try (KafkaShareStateLog b = open()) {
            assertThat(replay(b)).containsExactly("0 open-key-0=open-value-0", "1 open-key-1=open-value-1");
        }
    }

    @Test
    void shouldReportACommitTheUpstreamLeftUnansweredAsLost() throws Exception {
        // A writer that reaches the upstream only through a link the test can cut
        UpstreamKafka.ProxiedListener listener = UPSTREAM.proxiedListener(0);
        Map<String, Object> config = new java.util.HashMap<>(UPSTREAM.clientConfig());
        config.put("bootstrap.servers", listener.bootstrapServers());
        try (FaultyProxy link = new FaultyProxy(listener.advertisedPort(), listener.port())) {
            KafkaShareStateLog a = KafkaShareStateLog.open(config, topic, PARTITION, "pier-state-" + topic,
                    Duration.ofSeconds(3));
            try {
                // Given A appended two records, then its link to the upstream was cut
                assertThat(a.append(entries("cut", 2))).isZero();
                link.partition();

                // When A commits: the upstream does not answer within the log's timeout, so the
                // flush fails as lost (the gateway gives the state partition up and serves it again
                // from the upstream), not as a failure that stops the node
                assertThatThrownBy(a::flush).isInstanceOf(KafkaShareStateLog.LostException.class)
                        .hasMessageContaining("upstream topic " + topic + " partition 1")
                        .hasRootCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
                assertThatThrownBy(() -> a.append(entries("after", 1)))
                        .isInstanceOf(KafkaShareStateLog.LostException.class);
            } finally {
                link.heal();
                a.close();
            }
        }
        // Then the next writer takes the partition over and finds the commit all done or not at all
        try (KafkaShareStateLog b = open()) {
            assertThat(replay(b)).isIn(List.of(), List.of("0 cut-key-0=cut-value-0", "1 cut-key-1=cut-value-1"));
        }
    }

    @Test
    void shouldFailAFlushWhenAnotherWriterMovedTheOffsets() throws Exception {
        try (KafkaShareStateLog a = open();
                KafkaShareStateLog intruder = KafkaShareStateLog.open(UPSTREAM.clientConfig(), topic, PARTITION,
                        "another-writer-" + topic, TIMEOUT)) {
            // Given another transactional id that writes two records first
            intruder.append(entries("intruder", 2));
            intruder.flush();

            // Then A's records do not land where A predicted, and its flush says so
            assertThat(a.append(entries("a", 1))).isZero();
            assertThatThrownBy(a::flush).isInstanceOf(IOException.class)
                    .hasMessageContaining("a record expected at offset 0 was written at offset 2")
                    .hasMessageContaining("upstream topic " + topic + " partition 1");
        }
    }

    @Test
    void shouldKeepAPersistersStateAcrossAReopenOnTheUpstream() throws Exception {
        // Given a persister over the upstream log: three keys written, one of them deleted, a group
        // recorded, two cold passes that move the log start, and writes after them
        Uuid topicId = new Uuid(5L, 6L);
        List<SharePartitionKey> keys = List.of(new SharePartitionKey("g1", topicId, 0),
                new SharePartitionKey("g1", topicId, 1), new SharePartitionKey("g2", topicId, 0));
        InMemorySharePersister reference = new InMemorySharePersister();
        DurableSharePersister.Options options = new DurableSharePersister.Options(4, 1_000_000, 1024 * 1024);
        ManualClock clock = new ManualClock(1_000_000);
        List<String> fatal = new CopyOnWriteArrayList<>();
        Map<SharePartitionKey, ShareState> before;
        long startBefore;
        DurableSharePersister persister = DurableSharePersister.open(open(), options, Wakeup.NONE,
                (what, cause) -> fatal.add(what));
        try {
            ManualAgentRunner runner = new ManualAgentRunner(persister, clock);
            for (SharePartitionKey k : keys) {
                runner.await(persister.initialize(k, 0));
                reference.initialize(k, 0).get();
            }
            for (int round = 0; round < 12; round++) {
                // a round's three writes go out in one flush
                List<CompletableFuture<Void>> pending = new ArrayList<>();
                for (int p = 0; p < keys.size(); p++) {
                    ShareStateWrite w = new ShareStateWrite(keys.get(p), 0, round, List.of(new PersistedBatch(
                            round + p, round + p + 2, p == 1 ? PersistedBatch.ARCHIVED : PersistedBatch.ACKNOWLEDGED,
                            (short) (1 + p))));
                    pending.add(persister.write(w));
                    reference.write(w).get();
                }
                for (CompletableFuture<Void> f : pending) {
                    runner.await(f);
                }
                if (round == 5) {
                    runner.await(persister.compactNow());
                    runner.await(persister.compactNow());
                }
            }
            runner.await(persister.delete(keys.get(2)));
            reference.delete(keys.get(2)).get();
            runner.await(persister.recordGroup("g1"));
            before = persister.states();
            startBefore = persister.logStartOffset();
        } finally {
            persister.close();
        }
        for (SharePartitionKey k : keys) {
            assertThat(before.get(k)).as("%s", k).isEqualTo(reference.read(k));
        }
        assertThat(before).hasSize(2);
        assertThat(startBefore).as("the cold passes moved the start").isGreaterThan(0);

        // When another persister opens the log (taking over its transactional id)
        DurableSharePersister reopened = DurableSharePersister.open(open(), options, Wakeup.NONE,
                (what, cause) -> fatal.add(what));
        try {
            // Then it holds the same state, replayed from the moved start
            assertThat(reopened.states()).isEqualTo(before);
            assertThat(reopened.groups()).isEqualTo(Set.of("g1"));
            assertThat(reopened.logStartOffset()).isEqualTo(startBefore);
        } finally {
            reopened.close();
        }
        assertThat(fatal).isEmpty();
    }
}
