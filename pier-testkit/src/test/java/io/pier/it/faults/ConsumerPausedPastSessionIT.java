package io.pier.it.faults;

import static io.pier.it.faults.PausedConsumerIT.assertAcceptedIsFinal;
import static io.pier.it.faults.PausedConsumerIT.confirmed;
import static io.pier.it.faults.PausedConsumerIT.held;
import static io.pier.it.faults.PausedConsumerIT.pollAndAccept;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.faults.ChildShareConsumer.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A share consumer process paused with SIGSTOP while it holds records, past their lock and past
 * its group session (reliability.md S16 in full; {@link PausedConsumerIT} pauses it past the lock
 * only). Its heartbeats stop with it, so the broker drops its member from the group; its
 * connections stay open, so its share session lives on and only the lock's expiry frees its
 * records. Another consumer gets them with delivery count 2 and accepts them. When the paused one
 * goes on, its late ACCEPTs are refused with INVALID_RECORD_STATE (InvalidRecordStateException in
 * its acknowledgement-commit callback), its next heartbeat is answered UNKNOWN_MEMBER_ID, and the
 * client joins again by itself (its own member id, epoch 0, as the Kafka 4.4 client does) and gets
 * and accepts new records. No record whose ACCEPT was confirmed is delivered again, to either
 * consumer, and every record is accepted once.
 *
 * <p>Kafka 4.4 answers the late ACCEPTs differently, as this scenario run against the reference
 * broker through the same proxy showed (2026-12-05): by then the other consumer has settled every record, so the group's
 * start offset has passed them, and Kafka takes an acknowledgement wholly below the start offset
 * as already archived and answers it with no error; its client then reports the ACCEPTs as done,
 * and each held record is accept-confirmed twice. Where the start offset has not passed them,
 * Kafka refuses them with INVALID_RECORD_STATE, as Pier does in both cases. Pier's refusal is what
 * the reliability reference asks for (S16: its acknowledgements fail). The heartbeat answer and the
 * rejoin are the same on both brokers.
 *
 * <p>The paused consumer is a real KafkaShareConsumer in a child JVM ({@link
 * PausableShareConsumer}) that reaches the broker through a {@link FaultyProxy}, which adds no
 * fault here: it lets the test see what the broker answered the child's heartbeats and
 * acknowledgements. The other consumer and the test's checks use the direct listener.
 */
@Timeout(120)
class ConsumerPausedPastSessionIT {
    private static final String TOPIC = "paused-session";
    private static final String GROUP = "paused-session-group";
    private static final long LOCK_MS = 2_000;
    /**
     * The group's session timeout and heartbeat interval (Kafka's defaults are 45 s and 5 s): a
     * pause of a few seconds outlasts both the lock and the session, and a running member misses
     * six heartbeats before it is dropped, not one.
     */
    private static final long SESSION_MS = 3_000;
    private static final long HEARTBEAT_MS = 500;
    /**
     * How much earlier than the child reports a delivery the broker may have locked it: the client
     * fetches in its background thread, before the application's poll returns the records.
     */
    private static final long REPORT_MARGIN_MS = 500;
    private static final int FIRST_RECORDS = 100;
    private static final int LATER_RECORDS = 20;
    private static final String CHILD_ID = "paused-child";
    private static final String OTHER_ID = "other-consumer";

    private ProxiedBroker broker;
    private ChildShareConsumer child;
    private Path childOutput;
    /** The child's heartbeats, acknowledgements and fetches, in the order their answers came. */
    private final List<Seen> seen = new CopyOnWriteArrayList<>();

    /**
     * One exchange of the child's: the member id and epoch it sent (the member epoch of a
     * heartbeat, the share session epoch otherwise), the offsets it acknowledged ({@code
     * first-last}), and the answer: its top-level error, the member epoch a heartbeat was given,
     * and the error each partition's acknowledgements got.
     */
    record Seen(ApiKeys api, long atNanos, String memberId, int epoch, List<String> acks, Errors error,
            int answeredEpoch, List<Errors> ackErrors) {
        boolean acknowledges(long offset) {
            return acks.stream().anyMatch(range -> {
                String[] r = range.split("-");
                return Long.parseLong(r[0]) <= offset && offset <= Long.parseLong(r[1]);
            });
        }

        @Override
        public String toString() {
            return api.name + "(" + memberId + ", " + epoch + (acks.isEmpty() ? "" : ", acks " + acks) + ") -> "
                    + error + (api == ApiKeys.SHARE_GROUP_HEARTBEAT ? " epoch " + answeredEpoch : "")
                    + (ackErrors.isEmpty() ? "" : " acks " + ackErrors);
        }
    }

    @BeforeEach
    void start() throws Exception {
        broker = ProxiedBroker.start(Map.of(
                "group.share.min.record.lock.duration.ms", "1000",
                "group.share.min.session.timeout.ms", "1000",
                "group.share.min.heartbeat.interval.ms", "100"));
        // The heartbeat interval in the same request as the session timeout: it must stay below it.
        broker.topicForGroup(TOPIC, GROUP, Map.of(
                "share.record.lock.duration.ms", String.valueOf(LOCK_MS),
                "share.heartbeat.interval.ms", String.valueOf(HEARTBEAT_MS),
                "share.session.timeout.ms", String.valueOf(SESSION_MS)));
        broker.proxy.watch(ApiKeys.SHARE_GROUP_HEARTBEAT, exchange -> {
            if (CHILD_ID.equals(exchange.header().clientId())) {
                var request = ((ShareGroupHeartbeatRequest) exchange.request()).data();
                var response = ((ShareGroupHeartbeatResponse) exchange.response()).data();
                seen.add(new Seen(ApiKeys.SHARE_GROUP_HEARTBEAT, exchange.answeredNanos(), request.memberId(),
                        request.memberEpoch(), List.of(), Errors.forCode(response.errorCode()),
                        response.memberEpoch(), List.of()));
            }
        });
        broker.proxy.watch(ApiKeys.SHARE_ACKNOWLEDGE, exchange -> {
            if (CHILD_ID.equals(exchange.header().clientId())) {
                var request = ((ShareAcknowledgeRequest) exchange.request()).data();
                var response = ((ShareAcknowledgeResponse) exchange.response()).data();
                List<String> acks = new ArrayList<>();
                request.topics().forEach(t -> t.partitions().forEach(p -> p.acknowledgementBatches()
                        .forEach(b -> acks.add(b.firstOffset() + "-" + b.lastOffset()))));
                List<Errors> ackErrors = response.responses().stream()
                        .flatMap(t -> t.partitions().stream())
                        .map(ShareAcknowledgeResponseData.PartitionData::errorCode).map(Errors::forCode).toList();
                seen.add(new Seen(ApiKeys.SHARE_ACKNOWLEDGE, exchange.answeredNanos(), request.memberId(),
                        request.shareSessionEpoch(), acks, Errors.forCode(response.errorCode()), -1, ackErrors));
            }
        });
        broker.proxy.watch(ApiKeys.SHARE_FETCH, exchange -> {
            if (CHILD_ID.equals(exchange.header().clientId())) {
                var request = ((ShareFetchRequest) exchange.request()).data();
                var response = ((ShareFetchResponse) exchange.response()).data();
                List<String> acks = new ArrayList<>();
                request.topics().forEach(t -> t.partitions().forEach(p -> p.acknowledgementBatches()
                        .forEach(b -> acks.add(b.firstOffset() + "-" + b.lastOffset()))));
                // A fetch's acknowledgements are answered in their own field, apart from the fetch's error.
                List<Errors> ackErrors = acks.isEmpty() ? List.of() : response.responses().stream()
                        .flatMap(t -> t.partitions().stream())
                        .map(ShareFetchResponseData.PartitionData::acknowledgeErrorCode).map(Errors::forCode).toList();
                seen.add(new Seen(ApiKeys.SHARE_FETCH, exchange.answeredNanos(), request.memberId(),
                        request.shareSessionEpoch(), acks, Errors.forCode(response.errorCode()), -1, ackErrors));
            }
        });
    }

    @AfterEach
    void stop() throws Exception {
        try {
            if (child != null) {
                child.close();
            }
            if (childOutput != null) {
                Files.deleteIfExists(childOutput);
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }

    @Test
    void shouldFenceAConsumerPausedPastItsSessionRefuseItsLateAcceptsAndLetItRejoin() throws Exception {
        Map<Long, String> acked = new ConcurrentHashMap<>();
        ProxiedShareLoad.produce(broker.direct, TOPIC, FIRST_RECORDS, acked, 30_000);

        try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.direct))) {
            // Given a consumer that ACCEPTs two polls of up to 10 records, then holds the third,
            childOutput = Files.createTempFile("paused-session-consumer-", ".log");
            child = new ChildShareConsumer(childOutput, PausableShareConsumer.class, broker.proxied, TOPIC, GROUP,
                    "3", CHILD_ID);
            await("the child consumer holding records").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        assertThat(child.alive()).as("child running; output:\n%s", child.output()).isTrue();
                        return child.events().stream().anyMatch(e -> e.kind().equals("HOLDING"));
                    });
            ShareMemberDescription before = member(admin, CHILD_ID).orElseThrow(
                    () -> new AssertionError("the child holds records but is no member of the group"));

            // when it is stopped, heartbeat thread and all,
            child.pause();
            long pausedAt = System.nanoTime();
            await("the child stopped").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(child::stopped);
            List<Long> held = held(child.events());
            assertThat(held).as("records the paused consumer holds").isNotEmpty();

            // then another consumer of the group takes everything left, the held records once their lock ran out,
            List<Event> others = new ArrayList<>();
            long droppedAfterMs;
            try (KafkaShareConsumer<String, String> other = otherConsumer()) {
                other.subscribe(Set.of(TOPIC));
                await("the other consumer accepting every record").atMost(Duration.ofSeconds(30))
                        .pollInSameThread().pollInterval(Duration.ofMillis(1))
                        .until(() -> {
                            pollAndAccept(other, others);
                            List<Event> both = new ArrayList<>(child.events());
                            both.addAll(others);
                            return confirmed(both).keySet().containsAll(acked.keySet());
                        });
                // and the broker drops the paused member once its session runs out: the other is left alone.
                await("the paused member dropped from the group").atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(50))
                        .untilAsserted(() -> assertThat(members(admin)).as("the group's members")
                                .extracting(ShareMemberDescription::clientId).containsExactly(OTHER_ID));
                droppedAfterMs = Duration.ofNanos(System.nanoTime() - pausedAt).toMillis();
            }
            assertThat(child.stopped()).as("the child still paused").isTrue();
            Map<Long, Event> firstDelivery = new HashMap<>();
            child.events().stream().filter(e -> e.kind().equals("DELIVERED") && held.contains(e.offset()))
                    .forEach(e -> firstDelivery.put(e.offset(), e));
            List<Event> retaken = others.stream()
                    .filter(e -> e.kind().equals("DELIVERED") && held.contains(e.offset())).toList();
            assertThat(retaken).as("held records the other consumer got")
                    .extracting(Event::offset).containsExactlyInAnyOrderElementsOf(held);
            // I8: the second lease began only once the first ran out, LOCK_MS after the broker locked the record.
            assertThat(retaken).as("held records the other consumer got: the next delivery count, after the lock")
                    .allSatisfy(e -> {
                        assertThat(e.count()).isEqualTo((short) 2);
                        assertThat(e.atMs()).isGreaterThanOrEqualTo(
                                firstDelivery.get(e.offset()).atMs() + LOCK_MS - REPORT_MARGIN_MS);
                    });

            // The member went once its last heartbeat was SESSION_MS old, which may be a little
            // before the pause is; the pause outlasts the session timeout itself by a margin too.
            Thread.sleep(Math.max(0, SESSION_MS + 1_000 - Duration.ofNanos(System.nanoTime() - pausedAt).toMillis()));

            // When it goes on and ACCEPTs what it held,
            long pausedMs = Duration.ofNanos(System.nanoTime() - pausedAt).toMillis();
            long resumedAt = System.nanoTime();
            child.resume();
            child.command(PausableShareConsumer.GO);
            // then each late ACCEPT is refused,
            await("the child's late ACCEPTs answered").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> child.events().stream()
                            .filter(e -> held.contains(e.offset()) && !e.kind().equals("DELIVERED"))
                            .count() == held.size());
            List<Event> late = child.events().stream()
                    .filter(e -> held.contains(e.offset()) && !e.kind().equals("DELIVERED")).toList();
            assertThat(late).as("the late ACCEPTs, as the child's acknowledgement-commit callback saw them; output:\n%s",
                    child.output()).allSatisfy(e -> {
                        assertThat(e.kind()).isEqualTo("REFUSED");
                        assertThat(e.detail()).isEqualTo("InvalidRecordStateException");
                    });
            // the client, fenced, joins the group again by itself, with a new member epoch,
            await("the child back in the group").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> member(admin, CHILD_ID)
                            .filter(m -> m.memberEpoch() > before.memberEpoch()
                                    && m.assignment().topicPartitions().contains(new TopicPartition(TOPIC, 0)))
                            .isPresent());
            ShareMemberDescription after = member(admin, CHILD_ID).orElseThrow();

            // and gets and accepts what is written now.
            int written = acked.size();
            ProxiedShareLoad.produce(broker.direct, TOPIC, LATER_RECORDS, acked, 30_000);
            Set<Long> later = new TreeMap<>(acked).tailMap((long) written).keySet();
            await("the rejoined child accepting new records").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> confirmed(child.events()).keySet().containsAll(later));
            child.command(PausableShareConsumer.STOP);
            assertThat(child.waitFor(30)).as("child closed; output:\n%s", child.output()).isTrue();
            assertThat(child.exitValue()).as("child exit code; output:\n%s", child.output()).isZero();

            // On the wire: the broker had dropped the member, and it told the client so; the late
            // ACCEPTs went to the share session the member still had (its connections stayed
            // open), and the broker refused them there.
            List<Seen> sinceResume = seen.stream().filter(s -> s.atNanos() - resumedAt >= 0).toList();
            String exchanges = String.join("\n  ", sinceResume.stream().map(Seen::toString).toList());
            List<Seen> heartbeats = sinceResume.stream().filter(s -> s.api() == ApiKeys.SHARE_GROUP_HEARTBEAT).toList();
            assertThat(heartbeats).as("the child's heartbeats since SIGCONT:\n  %s", exchanges).isNotEmpty();
            assertThat(heartbeats.get(0)).as("its first heartbeat after SIGCONT").satisfies(h -> {
                assertThat(h.memberId()).isEqualTo(before.consumerId());
                assertThat(h.epoch()).isEqualTo(before.memberEpoch());
                assertThat(h.error()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
            });
            // The 4.4 client keeps its member id and joins again at epoch 0.
            assertThat(heartbeats).as("its heartbeats since SIGCONT:\n  %s", exchanges)
                    .filteredOn(h -> h.epoch() == 0).singleElement().satisfies(h -> {
                        assertThat(h.memberId()).isEqualTo(before.consumerId());
                        assertThat(h.error()).isEqualTo(Errors.NONE);
                        assertThat(h.answeredEpoch()).isGreaterThan(before.memberEpoch());
                    });
            assertThat(after.consumerId()).as("its member id in the group, back").isEqualTo(before.consumerId());
            assertThat(sinceResume).as("the exchanges since SIGCONT that acknowledged held records:\n  %s", exchanges)
                    .filteredOn(x -> held.stream().anyMatch(x::acknowledges)).singleElement().satisfies(x -> {
                        assertThat(x.memberId()).isEqualTo(before.consumerId());
                        assertThat(x.error()).isEqualTo(Errors.NONE);
                        assertThat(x.ackErrors()).containsExactly(Errors.INVALID_RECORD_STATE);
                    });

            List<Event> all = new ArrayList<>(child.events());
            all.addAll(others);
            assertAcceptedIsFinal(all);
            // I7 and no other redelivery: a held record was delivered twice, with counts 1 and 2 (to the
            // child, then the other), and every other record once.
            Map<Long, List<Short>> counts = new TreeMap<>();
            all.stream().filter(e -> e.kind().equals("DELIVERED"))
                    .forEach(e -> counts.computeIfAbsent(e.offset(), o -> new ArrayList<>()).add(e.count()));
            counts.values().forEach(list -> list.sort(null));
            Map<Long, List<Short>> expected = new TreeMap<>();
            acked.keySet().forEach(o -> expected.put(o, held.contains(o) ? List.of((short) 1, (short) 2)
                    : List.of((short) 1)));
            assertThat(counts).as("each record's delivery counts, in both processes").isEqualTo(expected);
            assertThat(confirmed(all).keySet()).as("every record accepted by one of them, once")
                    .isEqualTo(acked.keySet());
            assertThat(PartitionReader.readAll(broker.direct, TOPIC)).as("the log, each record once")
                    .isEqualTo(new TreeMap<>(acked));
            assertThat(PartitionReader.shareStartOffset(broker.direct, GROUP, TOPIC))
                    .as("the group's start offset at the log end").isEqualTo(acked.size());
            System.out.printf("ConsumerPausedPastSessionIT: member %s (epoch %d) paused for %d ms holding %d records,"
                    + " seen gone from the group %d ms into the pause; %d late ACCEPTs refused; back as %s (epoch %d);"
                    + " %d deliveries, %d ACCEPTs confirmed%n", before.consumerId(), before.memberEpoch(), pausedMs,
                    held.size(), droppedAfterMs, late.size(), after.consumerId(), after.memberEpoch(),
                    all.stream().filter(e -> e.kind().equals("DELIVERED")).count(), confirmed(all).size());
            System.out.printf("ConsumerPausedPastSessionIT: the child's exchanges since SIGCONT:%n  %s%n", exchanges);
        }
    }

    private KafkaShareConsumer<String, String> otherConsumer() {
        Properties p = new Properties();
        p.put("bootstrap.servers", broker.direct);
        p.put("group.id", GROUP);
        p.put("client.id", OTHER_ID);
        p.put("share.acknowledgement.mode", "explicit");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static List<ShareMemberDescription> members(Admin admin) throws Exception {
        return List.copyOf(admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP)
                .get(10, TimeUnit.SECONDS).members());
    }

    /** The one member whose client id is {@code clientId}, if any; fails if there are two. */
    private static Optional<ShareMemberDescription> member(Admin admin, String clientId) throws Exception {
        List<ShareMemberDescription> found = members(admin).stream()
                .filter(m -> m.clientId().equals(clientId)).toList();
        assertThat(found).as("members with client id %s", clientId).hasSizeLessThanOrEqualTo(1);
        return found.stream().findFirst();
    }
}
