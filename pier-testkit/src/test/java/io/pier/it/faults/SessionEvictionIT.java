package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.LongSummaryStatistics;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A share consumer whose connection is reset frees its share session at once (reliability.md
 * S17, connection_drop_evicts_session). The broker holds at most {@code
 * group.share.max.share.sessions} sessions, here 3, all taken by real consumers that each hold 10
 * unacknowledged records under a 60 s lock. A fourth consumer is refused with
 * SHARE_SESSION_LIMIT_REACHED, the code the Kafka client answers by trying again with a new
 * session, and gets nothing. Then one holder is cut off at the proxy: its connections reset (RST)
 * and every new one reset at its first request, as a firewall rejecting its host would. Its
 * session goes with its connection, so the fourth consumer's session now fits, and it gets the cut
 * consumer's records with delivery count 2, long before their lock could run out; the records of
 * the holder that was not cut stay with it, and its acknowledgements still count.
 *
 * <p>All consumers reach the broker through a {@link FaultyProxy}, which shows the test every
 * ShareFetch answer: that is how it knows what the refused consumer was told, and when.
 */
@Timeout(120)
class SessionEvictionIT {
    private static final String TOPIC = "evicted";
    private static final String GROUP = "evicted-group";
    /** A second group, whose consumer only takes up the third session. */
    private static final String OTHER_GROUP = "evicted-other-group";
    private static final int MAX_SESSIONS = 3;
    private static final int RECORDS = 40;
    /** The longest lock a group may set: records that come back sooner came back because a session ended. */
    private static final long LOCK_MS = 60_000;
    private static final int REQUEST_TIMEOUT_MS = 5_000;

    private ProxiedBroker broker;
    private final List<KafkaShareConsumer<String, String>> consumers = new ArrayList<>();
    /** Every ShareFetch answer through the proxy, in the order they came. */
    private final List<Answer> answers = new CopyOnWriteArrayList<>();

    /** One ShareFetch answer as the proxy saw it go by. */
    private record Answer(String clientId, Errors error, int maxWaitMs, long answeredAfterMs) {}

    @BeforeEach
    void start() throws Exception {
        // group.share.max.size must not exceed the session limit; 3 lets the cut consumer, the
        // keeper and the newcomer all be members of the group.
        broker = ProxiedBroker.start(Map.of(
                "group.share.max.share.sessions", String.valueOf(MAX_SESSIONS),
                "group.share.max.size", String.valueOf(MAX_SESSIONS)));
        broker.topicForGroup(TOPIC, GROUP, Map.of("share.record.lock.duration.ms", String.valueOf(LOCK_MS)));
        broker.groupConfigs(OTHER_GROUP, Map.of());
        ProxiedShareLoad.produce(broker.direct, TOPIC, RECORDS, new ConcurrentHashMap<>(), 30_000);
        broker.proxy.watch(ApiKeys.SHARE_FETCH, exchange -> {
            ShareFetchRequest request = (ShareFetchRequest) exchange.request();
            ShareFetchResponse response = (ShareFetchResponse) exchange.response();
            answers.add(new Answer(exchange.header().clientId(), response.error(), request.data().maxWaitMs(),
                    Duration.ofNanos(exchange.answeredNanos() - exchange.sentNanos()).toMillis()));
        });
    }

    @AfterEach
    void stop() throws Exception {
        for (KafkaShareConsumer<String, String> c : consumers) {
            // The cut one cannot say goodbye; none of them needs to.
            c.close(Duration.ofSeconds(1));
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldFreeTheSessionAndReleaseTheRecordsOfAConsumerWhoseConnectionIsReset() throws Exception {
        // Given: three sessions, the limit, each holding 10 records unacknowledged.
        KafkaShareConsumer<String, String> victim = consumer(GROUP, "victim");
        Held victims = holdOnePoll(victim);
        KafkaShareConsumer<String, String> keeper = consumer(GROUP, "keeper");
        Held keepers = holdOnePoll(keeper);
        holdOnePoll(consumer(OTHER_GROUP, "other-group"));
        assertThat(victims.offsets()).as("records the victim holds").hasSize(10);
        assertThat(keepers.offsets()).as("records the keeper holds").hasSize(10).doesNotContainAnyElementsOf(
                victims.offsets());

        // A fourth consumer is refused: the cache is full. It is told so with the code the client
        // knows (a new session next time), not an error that would end it or a silence.
        KafkaShareConsumer<String, String> newcomer = consumer(GROUP, "newcomer");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<ConsumerRecord<String, String>> early = new ArrayList<>();
        while (answersTo("newcomer").size() < 3 && System.nanoTime() < deadline) {
            newcomer.poll(Duration.ofMillis(200)).forEach(early::add);
        }
        assertThat(early).as("records the newcomer got while the cache was full").isEmpty();
        assertThat(answersTo("newcomer")).as("the newcomer's ShareFetch answers while the cache was full")
                .hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy(a -> assertThat(a.error()).isEqualTo(Errors.SHARE_SESSION_LIMIT_REACHED));

        // When: the victim is cut off, its connections reset.
        long cutAt = System.nanoTime();
        assertThat(broker.proxy.cut("victim")).as("victim connections reset").isGreaterThanOrEqualTo(1);

        // Then: the newcomer's session fits, and the victim's records come to it with delivery
        // count 2, well inside their lock; it accepts all it gets.
        Map<Long, Short> got = new HashMap<>();
        deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long gotVictimsAt = 0;
        while (!got.keySet().containsAll(victims.offsets()) && System.nanoTime() < deadline) {
            List<ConsumerRecord<String, String>> polled = new ArrayList<>();
            newcomer.poll(Duration.ofMillis(200)).forEach(polled::add);
            for (ConsumerRecord<String, String> r : polled) {
                got.put(r.offset(), r.deliveryCount().orElse((short) -1));
                newcomer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            if (!polled.isEmpty()) {
                assertThat(newcomer.commitSync(Duration.ofSeconds(10)).values()).as("the newcomer's commit")
                        .allSatisfy(e -> assertThat(e).isEmpty());
            }
            if (got.keySet().containsAll(victims.offsets())) {
                gotVictimsAt = System.nanoTime();
            }
        }
        assertThat(got).as("the newcomer got the victim's records, each with delivery count 2")
                .containsAllEntriesOf(victims.offsets().stream().collect(Collectors.toMap(o -> o, o -> (short) 2)));
        long sinceLockedMs = Duration.ofNanos(gotVictimsAt - victims.lockedNanos()).toMillis();
        assertThat(sinceLockedMs).as("ms from the victim's acquisition to their redelivery").isLessThan(LOCK_MS);
        assertThat(got.keySet()).as("records the keeper holds stay with it").doesNotContainAnyElementsOf(
                keepers.offsets());
        // Refusals may still come in the moment the broker takes to drop the session; once one
        // ShareFetch is served, the newcomer has its session and no refusal follows.
        List<Answer> newcomers = answersTo("newcomer");
        int served = indexOf(newcomers, Errors.NONE);
        assertThat(served).as("index of the newcomer's first ShareFetch served").isPositive();
        assertThat(newcomers.subList(served, newcomers.size())).as("the newcomer's ShareFetch answers once served")
                .allSatisfy(a -> assertThat(a.error()).isEqualTo(Errors.NONE));

        // Exactly one session was freed: the cache is full again, and one more consumer (of the
        // other group, whose size allows it) is refused as the newcomer was.
        KafkaShareConsumer<String, String> late = consumer(OTHER_GROUP, "late");
        deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (answersTo("late").size() < 3 && System.nanoTime() < deadline) {
            assertThat(late.poll(Duration.ofMillis(200)).isEmpty()).as("no records for the late consumer").isTrue();
        }
        assertThat(answersTo("late")).as("the late consumer's ShareFetch answers").hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy(a -> assertThat(a.error()).isEqualTo(Errors.SHARE_SESSION_LIMIT_REACHED));
        // A refused client asks again as fast as it is answered (see the finding below): not for longer than needed.
        consumers.remove(late);
        late.close(Duration.ofSeconds(5));

        // The keeper's session went on: its acknowledgements count.
        keepers.records().forEach(r -> keeper.acknowledge(r, AcknowledgeType.ACCEPT));
        Map<TopicIdPartition, Optional<KafkaException>> kept = keeper.commitSync(Duration.ofSeconds(10));
        assertThat(kept).as("the keeper's commit").isNotEmpty();
        assertThat(kept.values()).allSatisfy(e -> assertThat(e).isEmpty());

        // The newcomer takes the rest; every record of the group is then accepted, none lost.
        deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (PartitionReader.shareStartOffset(broker.direct, GROUP, TOPIC) < RECORDS && System.nanoTime() < deadline) {
            List<ConsumerRecord<String, String>> polled = new ArrayList<>();
            newcomer.poll(Duration.ofMillis(200)).forEach(polled::add);
            for (ConsumerRecord<String, String> r : polled) {
                got.put(r.offset(), r.deliveryCount().orElse((short) -1));
                newcomer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            if (!polled.isEmpty()) {
                var unused = newcomer.commitSync(Duration.ofSeconds(10));
            }
        }
        assertThat(PartitionReader.shareStartOffset(broker.direct, GROUP, TOPIC))
                .as("the group's start offset at the log end").isEqualTo(RECORDS);
        assertThat(got).as("the newcomer got every record the keeper did not hold").hasSize(RECORDS - 10);

        System.out.printf("SessionEvictionIT: %d ShareFetch of the newcomer refused (SHARE_SESSION_LIMIT_REACHED)"
                + " while the cache was full; after the cut, the victim's %d records redelivered to the newcomer %d ms"
                + " after the cut (%d ms after they were locked for %d ms)%n", served, victims.offsets().size(),
                Duration.ofNanos(gotVictimsAt - cutAt).toMillis(), sinceLockedMs, LOCK_MS);
    }

    /**
     * Kafka answers a ShareFetch that cannot open a session, because the cache is full, only after
     * the request's MaxWaitMs (KAFKA-19231, Kafka 4.1), as it would answer a fetch that found no
     * records. The Kafka client sends its next ShareFetch as soon as an answer comes, with no
     * back-off, so the delay is what keeps a refused consumer from asking again at once. Pier
     * answered at once (a finding of this test): a refused consumer asked about 2,400 times a
     * second for as long as the cache stayed full.
     */
    @Test
    void shouldAnswerARefusedSessionOnlyAfterTheFetchMaxWait() throws Exception {
        holdOnePoll(consumer(GROUP, "holder-1"));
        holdOnePoll(consumer(GROUP, "holder-2"));
        holdOnePoll(consumer(OTHER_GROUP, "holder-3"));

        KafkaShareConsumer<String, String> refused = consumer(GROUP, "refused");
        long start = System.nanoTime();
        long pollUntil = start + Duration.ofSeconds(2).toNanos();
        while (System.nanoTime() < pollUntil) {
            assertThat(refused.poll(Duration.ofMillis(200)).isEmpty()).as("no records for the refused consumer").isTrue();
        }
        long windowMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
        List<Answer> refusals = answersTo("refused");
        LongSummaryStatistics answeredAfter = refusals.stream().mapToLong(Answer::answeredAfterMs).summaryStatistics();
        Set<Integer> maxWaits = refusals.stream().map(Answer::maxWaitMs).collect(Collectors.toSet());
        System.out.printf("SessionEvictionIT: %d ShareFetch refused in %d ms, answered after %d to %d ms (MaxWaitMs %s)%n",
                refusals.size(), windowMs, answeredAfter.getMin(), answeredAfter.getMax(), maxWaits);
        assertThat(refusals).as("the refused consumer's ShareFetch answers").isNotEmpty()
                .allSatisfy(a -> assertThat(a.error()).isEqualTo(Errors.SHARE_SESSION_LIMIT_REACHED));
        assertThat(maxWaits).as("MaxWaitMs of its requests (the client's fetch.max.wait.ms)").containsExactly(500);
        // Kafka's delay is a timer of MaxWaitMs; 10% allows for its granularity.
        assertThat(answeredAfter.getMin()).as("the quickest refusal, in ms").isGreaterThanOrEqualTo(450);
        // Each refusal waits 500 ms, so a window of about 2 s holds a handful; the first may have
        // been sent before the window began.
        assertThat(refusals).as("refusals in %d ms", windowMs).hasSizeLessThanOrEqualTo((int) (windowMs / 500) + 2);
    }

    private static int indexOf(List<Answer> answers, Errors error) {
        for (int i = 0; i < answers.size(); i++) {
            if (answers.get(i).error() == error) {
                return i;
            }
        }
        return -1;
    }

    /** What one consumer holds: the records of its first non-empty poll, and when they were locked. */
    private record Held(List<ConsumerRecord<String, String>> records, long lockedNanos) {
        List<Long> offsets() {
            return records.stream().map(ConsumerRecord::offset).toList();
        }
    }

    /**
     * Polls until records come, and then never again: explicit mode forbids another poll before
     * they are acknowledged, and the client fetches only when polled, so it holds just these.
     */
    private static Held holdOnePoll(KafkaShareConsumer<String, String> consumer) {
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (records.isEmpty() && System.nanoTime() < deadline) {
            long before = System.nanoTime();
            consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            if (!records.isEmpty()) {
                // No later than the broker locked them: the poll began before it asked for them.
                return new Held(records, before);
            }
        }
        throw new AssertionError("no records within 30 s");
    }

    private List<Answer> answersTo(String clientId) {
        return answers.stream().filter(a -> clientId.equals(a.clientId())).toList();
    }

    /** A consumer of {@link ProxiedBroker#shareConsumer}, subscribed, closed after the test. */
    private KafkaShareConsumer<String, String> consumer(String group, String clientId) {
        KafkaShareConsumer<String, String> consumer = broker.shareConsumer(group, clientId, REQUEST_TIMEOUT_MS);
        consumers.add(consumer);
        consumer.subscribe(Set.of(TOPIC));
        return consumer;
    }
}
