package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.faults.FaultyProxy.AfterDrop;
import io.pier.it.faults.FaultyProxy.Exchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Acknowledgements whose answer is lost on the way back (reliability.md S31, ack_response_lost).
 * A real explicit-mode share consumer ACCEPTs every record it gets, through a {@link FaultyProxy}
 * that drops the answers to its first three requests that ACCEPT records past the first 20:
 * ShareAcknowledge (what {@code commitSync} sends), or ShareFetch (which carries the
 * acknowledgements of the poll before when the consumer polls without committing). The request
 * reaches the broker; only the answer is lost. After each loss the proxy resets the connection,
 * or, for ShareAcknowledge, goes silent instead so that the client's request times out.
 *
 * <p>The client must report those acknowledgements as failed: their outcome is unknown to it.
 * The proxy hands the test each lost answer, so the test knows what the broker said in it and
 * holds it to that: acknowledgements it applied are final (those records never come back), and
 * any it refused come back with a higher delivery count (I11); records it acquired in a lost
 * ShareFetch answer, which the client never saw, are released with the connection and delivered
 * again. Any other acknowledgement the client reports as failed is unknown to the test too, and
 * may go either way (I11). As everywhere, no record comes back after a confirmed ACCEPT (I5),
 * delivery counts only grow, and in the end every record is accepted exactly once: confirmed, or
 * its last ACCEPT applied with the answer lost, never both; the group's start offset reaches the
 * log end.
 */
@Timeout(120)
class AckResponseLostIT {
    private static final int RECORDS = 100;
    /** Records whose ACCEPTs are confirmed before answers start to be lost. */
    private static final int CONFIRMED_FIRST = 20;
    private static final int LOST = 3;
    /** Short, so that a silent connection fails the request soon. */
    private static final int REQUEST_TIMEOUT_MS = 2_000;
    private static final String CLIENT_ID = "acker";

    private ProxiedBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = ProxiedBroker.start(Map.of());
    }

    @AfterEach
    void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void shouldHoldToTheBrokersWordWhenShareAcknowledgeAnswersAreLostWithTheConnection() throws Exception {
        Ledger ledger = run("lost-ack-reset", ApiKeys.SHARE_ACKNOWLEDGE, AfterDrop.RESET, true);
        // The disconnect fails the request at once, and the client does not send it again. The
        // client reports it as UnknownServerException: it files the acknowledgements under
        // Errors.forException(DisconnectException), which has no code of its own (it is not a
        // NetworkException) and so maps to UNKNOWN_SERVER_ERROR. The broker said no such thing:
        // the test holds its lost answer.
        assertThat(ledger.lostAnswerFailures).as("what commitSync reported for the acknowledgements whose answer was lost")
                .containsExactly("UnknownServerException", "UnknownServerException", "UnknownServerException");
    }

    @Test
    void shouldHoldToTheBrokersWordWhenShareAcknowledgeAnswersAreLostAndTheConnectionGoesSilent() throws Exception {
        Ledger ledger = run("lost-ack-silent", ApiKeys.SHARE_ACKNOWLEDGE, AfterDrop.SILENCE, true);
        // After request.timeout.ms the client closes the connection and fails the request as above.
        assertThat(ledger.lostAnswerFailures).as("what commitSync reported for the acknowledgements whose answer was lost")
                .containsExactly("UnknownServerException", "UnknownServerException", "UnknownServerException");
    }

    @Test
    void shouldHoldToTheBrokersWordWhenShareFetchAnswersCarryingAcknowledgementsAreLost() throws Exception {
        Ledger ledger = run("lost-fetch-reset", ApiKeys.SHARE_FETCH, AfterDrop.RESET, false);
        // The acknowledgement-commit callback gets the client's own exception for the disconnect.
        assertThat(ledger.lostAnswerFailures).as("what the callback reported for the acknowledgements whose answer was lost")
                .containsExactly("DisconnectException", "DisconnectException", "DisconnectException");
        assertThat(ledger.lostAcquired).as("records acquired in lost ShareFetch answers, never seen by the client")
                .isNotEmpty();
    }

    /**
     * Runs the consumer until every record is settled and the answers to {@link #LOST} requests of
     * {@code key} were dropped, then checks every record against what the client and the lost
     * answers said. {@code commitSync}: the consumer commits after each poll (ShareAcknowledge);
     * otherwise its acknowledgements go with its next poll (ShareFetch) and it learns their outcome
     * in its acknowledgement-commit callback.
     */
    private Ledger run(String topic, ApiKeys key, AfterDrop after, boolean commitSync) throws Exception {
        String group = topic + "-group";
        broker.topicForGroup(topic, group, Map.of());
        Map<Long, String> produced = new ConcurrentHashMap<>();
        ProxiedShareLoad.produce(broker.direct, topic, RECORDS, produced, 30_000);
        assertThat(produced).as("records written").hasSize(RECORDS);

        Ledger ledger = new Ledger();
        List<Exchange> lost = new CopyOnWriteArrayList<>();
        // Once the first records' ACCEPTs are confirmed: the answers to requests that accept later ones.
        broker.proxy.dropResponses(key, LOST, request -> accepts(request).stream().anyMatch(o -> o >= CONFIRMED_FIRST),
                after, lost::add);
        try (KafkaShareConsumer<String, String> consumer = consumer(group, topic)) {
            if (!commitSync) {
                // Runs in poll, on this thread, with the broker's answer to the acknowledgements.
                consumer.setAcknowledgementCommitCallback((offsets, e) -> offsets.values()
                        .forEach(set -> ledger.outcome(set, e == null ? null : e.getClass().getSimpleName())));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline && ledger.violations.isEmpty() && !(lost.size() == LOST
                    && ledger.settled(RECORDS) && shareStartOffset(group, topic) == RECORDS)) {
                List<Long> sent = new ArrayList<>();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    ledger.delivered(r.offset(), r.deliveryCount().orElse((short) -1));
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    sent.add(r.offset());
                }
                if (commitSync && !sent.isEmpty()) {
                    Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(10));
                    assertThat(result).as("commitSync result").hasSize(1);
                    ledger.outcome(sent, result.values().iterator().next().map(e -> e.getClass().getSimpleName())
                            .orElse(null));
                }
            }
        }
        broker.proxy.stopDropping();

        // The proxy lost exactly the answers it was told to, and kept their requests.
        assertThat(broker.proxy.droppedResponses()).as("answers dropped").isEqualTo(LOST);
        assertThat(lost).as("lost exchanges").hasSize(LOST)
                .allSatisfy(x -> assertThat(x.requestBytes()).as("request kept").isNotNull());
        List<Verdict> verdicts = lost.stream().map(AckResponseLostIT::verdict).toList();
        ledger.lostAcquired.putAll(verdicts.stream().flatMap(v -> v.acquired().entrySet().stream())
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> b)));
        Set<Long> lostAcks = verdicts.stream().flatMap(v -> v.acked().stream()).collect(Collectors.toSet());

        System.out.printf("AckResponseLostIT %s: %s; %d connections through the proxy; lost answers: %s%n", topic,
                ledger.summary(lostAcks), broker.proxy.connections(), verdicts);

        // The client reported each request whose answer was lost as failed, with just its ACCEPTs.
        assertThat(lostAcks).as("ACCEPTs in lost requests").isNotEmpty();
        for (Verdict v : verdicts) {
            if (!v.acked().isEmpty()) {
                Failure failure = ledger.failures.stream().filter(f -> Set.copyOf(f.offsets()).equals(v.acked()))
                        .findFirst().orElseThrow(() -> new AssertionError("no failure reported for the lost answer to "
                                + v.acked() + "; failures: " + ledger.failures));
                ledger.lostAnswerFailures.add(failure.exception());
            }
        }

        ledger.assertInvariants(verdicts, RECORDS);
        assertThat(PartitionReader.readAll(broker.direct, topic)).as("the log, each record once")
                .isEqualTo(new TreeMap<>(produced));
        assertThat(shareStartOffset(group, topic)).as("the group's start offset at the log end").isEqualTo(RECORDS);
        return ledger;
    }

    /**
     * What the broker said in one lost answer: the offsets whose ACCEPT was in the request and
     * whether it applied them, and the records it acquired for the client (offset to delivery count).
     */
    private record Verdict(ApiKeys key, Set<Long> acked, boolean applied, Map<Long, Short> acquired) {}

    /** The offsets a ShareAcknowledge or ShareFetch request ACCEPTs (one partition in these tests). */
    private static Set<Long> accepts(AbstractRequest request) {
        Set<Long> accepted = new TreeSet<>();
        if (request instanceof ShareAcknowledgeRequest ack) {
            for (ShareAcknowledgeRequestData.AcknowledgeTopic t : ack.data().topics()) {
                for (ShareAcknowledgeRequestData.AcknowledgePartition p : t.partitions()) {
                    p.acknowledgementBatches().forEach(b -> addAccepts(accepted, b.firstOffset(), b.lastOffset(),
                            b.acknowledgeTypes()));
                }
            }
        } else if (request instanceof ShareFetchRequest fetch) {
            for (ShareFetchRequestData.FetchTopic t : fetch.data().topics()) {
                for (ShareFetchRequestData.FetchPartition p : t.partitions()) {
                    p.acknowledgementBatches().forEach(b -> addAccepts(accepted, b.firstOffset(), b.lastOffset(),
                            b.acknowledgeTypes()));
                }
            }
        }
        return accepted;
    }

    private static Verdict verdict(Exchange lost) {
        Set<Long> acked = accepts(lost.request());
        Map<Long, Short> acquired = new HashMap<>();
        boolean applied;
        if (lost.header().apiKey() == ApiKeys.SHARE_ACKNOWLEDGE) {
            ShareAcknowledgeResponse response = (ShareAcknowledgeResponse) lost.response();
            applied = response.error() == Errors.NONE && response.data().responses().stream()
                    .flatMap(t -> t.partitions().stream())
                    .allMatch(p -> p.errorCode() == Errors.NONE.code());
        } else {
            ShareFetchResponse response = (ShareFetchResponse) lost.response();
            List<ShareFetchResponseData.PartitionData> partitions = response.data().responses().stream()
                    .flatMap(t -> t.partitions().stream()).toList();
            applied = response.error() == Errors.NONE
                    && partitions.stream().allMatch(p -> p.acknowledgeErrorCode() == Errors.NONE.code());
            for (ShareFetchResponseData.PartitionData p : partitions) {
                for (ShareFetchResponseData.AcquiredRecords r : p.acquiredRecords()) {
                    LongStream.rangeClosed(r.firstOffset(), r.lastOffset()).forEach(o -> acquired.put(o, r.deliveryCount()));
                }
            }
        }
        return new Verdict(lost.header().apiKey(), acked, applied, acquired);
    }

    private static void addAccepts(Set<Long> into, long first, long last, List<Byte> types) {
        for (long o = first; o <= last; o++) {
            byte type = types.size() == 1 ? types.get(0) : types.get((int) (o - first));
            if (type == AcknowledgeType.ACCEPT.id) {
                into.add(o);
            }
        }
    }

    /** A failed acknowledgement outcome as the client reported it. */
    private record Failure(String exception, List<Long> offsets) {}

    /** What the consumer saw, offset by offset. Touched by the test thread only. */
    private static final class Ledger {
        /** Offset to the delivery counts it came with, in order. */
        final Map<Long, List<Short>> deliveries = new HashMap<>();
        /** Offset to the delivery count whose ACCEPT was confirmed. */
        final Map<Long, Short> confirmed = new HashMap<>();
        /** Offset to the delivery count whose ACCEPT failed in the client: outcome unknown to it. */
        final Map<Long, Short> unknown = new HashMap<>();
        /** Each failed acknowledgement outcome: the exception class, and the offsets whose ACCEPT it failed. */
        final List<Failure> failures = new ArrayList<>();
        /** The exception classes of the failures that were the lost answers, in their order. */
        final List<String> lostAnswerFailures = new ArrayList<>();
        /** Offset to delivery count of records acquired in lost answers (filled once they are known). */
        final Map<Long, Short> lostAcquired = new HashMap<>();
        final List<String> violations = new ArrayList<>();

        void delivered(long offset, short count) {
            if (confirmed.containsKey(offset)) {
                violations.add("offset " + offset + " delivered again (count " + count + ") after its ACCEPT of count "
                        + confirmed.get(offset) + " was confirmed");
            }
            List<Short> counts = deliveries.computeIfAbsent(offset, o -> new ArrayList<>());
            if (!counts.isEmpty() && count <= counts.get(counts.size() - 1)) {
                violations.add("offset " + offset + " delivered with count " + count + " after " + counts);
            }
            counts.add(count);
        }

        short lastCount(long offset) {
            List<Short> counts = deliveries.get(offset);
            return counts.get(counts.size() - 1);
        }

        /** The client's word on the ACCEPTs of {@code offsets}: confirmed (null) or failed with this exception. */
        void outcome(Iterable<Long> offsets, String failure) {
            List<Long> list = new ArrayList<>();
            offsets.forEach(list::add);
            if (failure != null) {
                failures.add(new Failure(failure, list));
            }
            for (long o : list) {
                if (failure == null) {
                    Short before = confirmed.put(o, lastCount(o));
                    if (before != null) {
                        violations.add("offset " + o + " confirmed twice (counts " + before + ", " + lastCount(o) + ")");
                    }
                } else {
                    unknown.put(o, lastCount(o));
                }
            }
        }

        /**
         * Every record has an outcome for its latest delivery's ACCEPT: confirmed, or failed (then
         * the broker either applied it, or delivers the record again, which unsettles it).
         */
        boolean settled(int records) {
            return LongStream.range(0, records).allMatch(o -> confirmed.containsKey(o) || failedLast(o));
        }

        /** Whether the ACCEPT of the latest delivery of {@code offset} failed in the client. */
        boolean failedLast(long offset) {
            return unknown.containsKey(offset) && deliveries.containsKey(offset)
                    && unknown.get(offset) == lastCount(offset);
        }

        void assertInvariants(List<Verdict> verdicts, int records) {
            assertThat(violations).as("I5 (nothing delivered after a confirmed ACCEPT), I7 (counts grow)").isEmpty();
            Set<Long> applied = new HashSet<>();
            for (Verdict v : verdicts) {
                for (long o : v.acked()) {
                    short acceptedCount = unknown.get(o);
                    short last = lastCount(o);
                    if (v.applied()) {
                        // The broker applied it: final, though the client never heard.
                        assertThat(last).as("last delivery count of %d, whose ACCEPT (of count %d) the broker applied"
                                + " in a lost answer", o, acceptedCount).isEqualTo(acceptedCount);
                        applied.add(o);
                    } else {
                        // The broker refused it: the record comes back, a later delivery.
                        assertThat(last).as("last delivery count of %d, whose ACCEPT (of count %d) the broker refused"
                                + " in a lost answer", o, acceptedCount).isGreaterThan(acceptedCount);
                    }
                }
            }
            lostAcquired.forEach((o, count) -> {
                // The client never saw that delivery; the connection's end released it, and it came again.
                assertThat(deliveries.get(o)).as("delivery counts of %d, acquired with count %d in a lost answer", o,
                        count).doesNotContain(count).anySatisfy(c -> assertThat(c).isGreaterThan(count));
            });
            assertThat(applied).as("records both confirmed and applied in a lost answer")
                    .doesNotContainAnyElementsOf(confirmed.keySet());
            // Any other ACCEPT that failed in the client (say, sent on a connection a reset had just
            // taken) is unknown to the test as well: applied (never delivered again) or not
            // (delivered again, a later count), both allowed (I11). Either way every record ends
            // accepted once: confirmed, or its last ACCEPT failed in the client but was applied.
            Set<Long> failedNotRedelivered = unknown.keySet().stream().filter(this::failedLast)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(failedNotRedelivered).as("records both confirmed and never delivered after a failed ACCEPT")
                    .doesNotContainAnyElementsOf(confirmed.keySet()).containsAll(applied);
            Set<Long> accepted = new TreeSet<>(confirmed.keySet());
            accepted.addAll(failedNotRedelivered);
            assertThat(accepted).as("records accepted: confirmed, or applied with their answer lost")
                    .isEqualTo(LongStream.range(0, records).boxed().collect(Collectors.toSet()));
        }

        String summary(Set<Long> lostAcks) {
            long redelivered = deliveries.values().stream().filter(c -> c.size() > 1).count();
            long firstSeenLater = deliveries.values().stream().filter(c -> c.get(0) > 1).count();
            List<Failure> others = failures.stream().filter(f -> !lostAcks.containsAll(f.offsets())).toList();
            return String.format("%d records delivered (%d more than once, %d first seen with a delivery count above 1),"
                    + " %d ACCEPTs confirmed, %d failed in the client; failures other than the lost answers: %s",
                    deliveries.size(), redelivered, firstSeenLater, confirmed.size(), unknown.size(), others);
        }
    }

    private long shareStartOffset(String group, String topic) throws Exception {
        return PartitionReader.shareStartOffset(broker.direct, group, topic);
    }

    /** A real explicit-mode share consumer through the proxy, taking at most 10 records a poll. */
    private KafkaShareConsumer<String, String> consumer(String group, String topic) {
        KafkaShareConsumer<String, String> consumer = broker.shareConsumer(group, CLIENT_ID, REQUEST_TIMEOUT_MS);
        consumer.subscribe(Set.of(topic));
        return consumer;
    }
}
