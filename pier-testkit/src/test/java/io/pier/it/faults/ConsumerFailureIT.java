package io.pier.it.faults;

import static io.pier.it.faults.PausedConsumerIT.pollAndAccept;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.faults.ChildShareConsumer.Event;
import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Share consumers that fail while records flow (reliability.md S13, S14 and S15): consumer
 * processes ended with SIGTERM (a clean shutdown, which closes the consumer) or SIGKILL (gone
 * without a word), one or two of three at once, or in five rounds of restarts; and Kafka's own
 * shape of a consumer that polls and closes again and again beside one that keeps consuming.
 *
 * <p>Each consumer of S13 and S14 is a real {@link KafkaShareConsumer} in a child JVM
 * ({@link AcceptingShareConsumer}) that reports every delivery and what its acknowledgement-commit
 * callback said, with its wall-clock time, so the oracle can check across processes:
 * <ul>
 *   <li>every acknowledged record is ACCEPTed, the ACCEPT confirmed exactly once in all (I1);
 *   <li>no record is delivered again once its ACCEPT was confirmed: a later delivery would carry a
 *       higher delivery count (I5);
 *   <li>a record's deliveries carry the counts 1, 2, ..., each once, and each delivery but the last
 *       went to a consumer that then died holding it; the next delivery came only after it died
 *       (I8, I11). The group's lock (10 s) never runs out here, so nothing else may free a record.
 * </ul>
 * A consumer that dies is always told first to hold a poll unacknowledged, so it dies holding
 * records. Those records reach a survivor (or a replacement) with the next delivery count, and well
 * within the lock in both cases: a clean close gives them back, and on loopback the kernel closes a
 * SIGKILLed process's sockets at once, which ends its share session just as a close does. (A
 * consumer whose connections stay open, so that only the lock frees its records, is
 * {@link PausedConsumerIT}'s case.) S15's consumers run in this JVM; the same oracle checks what
 * they noted.
 */
@Timeout(120)
class ConsumerFailureIT {
    private static final long LOCK_MS = 10_000;
    /** A consumer's work on each poll before it ACCEPTs it: records are held most of the time. */
    private static final long WORK_MS = 20;
    /** Records a second the steady producer of S13 and S14 writes. */
    private static final int RATE = 300;
    /** Clock margin between processes when ordering their events (one wall clock, different reads). */
    private static final long CLOCK_MARGIN_MS = 50;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig(
            "group.share.min.record.lock.duration.ms", "1000",
            // A new member's assignment comes with a heartbeat: short ones make rejoining quick.
            "group.share.heartbeat.interval.ms", "300",
            "group.share.min.heartbeat.interval.ms", "100");

    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        Collections.reverse(toClose);
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    /**
     * S13: under steady produce load, one or two of three consumers die holding records, by
     * SIGTERM or SIGKILL; the survivors take those records and the rest, and nothing is lost or
     * accepted twice.
     */
    @ParameterizedTest(name = "{0} of 3 consumers, {1}")
    @CsvSource({"1, clean", "1, hard", "2, clean", "2, hard"})
    void consumerFailure(int dying, String how) throws Exception {
        boolean hard = how.equals("hard");
        String topic = "failure-" + dying + "-" + how;
        Crew crew = crew(topic);
        SteadyProducer producer = producer(topic, "v", RATE, 20_000);

        // Given three consumers, each working
        List<String> members = List.of(crew.start(), crew.start(), crew.start());
        crew.awaitWorking(members);

        // When one or two of them die, each holding a poll
        List<String> victims = members.subList(0, dying);
        crew.holdThenEnd(victims, hard);

        // Then the survivors get the held records and the group goes on
        await("the held records delivered again").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> Oracle.of(crew.reports(), crew.endedAt).handedOver());
        producer.stop();
        crew.awaitAllConfirmed(producer.acked.keySet());
        crew.stopLive();

        Oracle oracle = Oracle.of(crew.reports(), crew.endedAt);
        oracle.assertInvariants(producer.acked.keySet());
        Handover handover = oracle.assertHandedOverWithin(LOCK_MS / 2, LOCK_MS, true);
        // The survivors were polling all along: the hand-over is counted from the kill itself.
        assertThat(handover.sinceEnd()).as("ms from the kill to the held records' redelivery (lock %d ms)", LOCK_MS)
                .isLessThanOrEqualTo(LOCK_MS / 2);
        assertLogAndStartOffset(topic, producer.acked);
        System.out.printf("ConsumerFailureIT S13 %d of 3 %s: %s; held records redelivered at most %d ms after"
                + " the kill (lock %d ms)%n", dying, how, oracle.summary(), handover.sinceEnd(), LOCK_MS);
    }

    /**
     * S14: five rounds of restarts under steady produce load, all three consumers at once or one at
     * a time (each round the oldest), by SIGKILL in rounds 1, 3 and 5 and SIGTERM in rounds 2 and
     * 4. Each round's new consumers rejoin and get records; nothing is lost or accepted twice, and
     * every redelivery is one of a record a dead consumer held.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"all", "rolling"})
    void consumerBounce(String mode) throws Exception {
        String topic = "bounce-" + mode;
        Crew crew = crew(topic);
        SteadyProducer producer = producer(topic, "v", RATE, 20_000);
        List<String> live = new ArrayList<>(List.of(crew.start(), crew.start(), crew.start()));
        crew.awaitWorking(live);

        for (int round = 1; round <= 5; round++) {
            boolean hard = round % 2 == 1;
            List<String> bounced = mode.equals("all") ? List.copyOf(live) : List.of(live.get(0));
            crew.holdThenEnd(bounced, hard);
            live.removeAll(bounced);
            List<String> fresh = new ArrayList<>();
            for (int i = 0; i < bounced.size(); i++) {
                fresh.add(crew.start());
            }
            live.addAll(fresh);
            // Rejoined: each new member gets records and its ACCEPTs are confirmed.
            crew.awaitWorking(fresh);
        }
        producer.stop();
        crew.awaitAllConfirmed(producer.acked.keySet());
        crew.stopLive();

        Oracle oracle = Oracle.of(crew.reports(), crew.endedAt);
        oracle.assertInvariants(producer.acked.keySet());
        Handover handover = oracle.assertHandedOverWithin(LOCK_MS / 2, LOCK_MS, true);
        assertThat(crew.endedAt).as("consumers ended").hasSize(mode.equals("all") ? 15 : 5);
        if (mode.equals("rolling")) {
            // Two consumers were polling all along: the hand-over is counted from the kill itself.
            assertThat(handover.sinceEnd()).as("ms from the kill to the held records' redelivery (lock %d ms)",
                    LOCK_MS).isLessThanOrEqualTo(LOCK_MS / 2);
        }
        assertLogAndStartOffset(topic, producer.acked);
        System.out.printf("ConsumerFailureIT S14 %s: %d consumers ended in 5 rounds; %s; held records redelivered"
                + " at most %d ms after the kill, %d ms after the group's next delivery (lock %d ms)%n", mode,
                crew.endedAt.size(), oracle.summary(), handover.sinceEnd(), handover.sinceNextDelivery(), LOCK_MS);
    }

    /**
     * S15, Kafka's shape: four producers write 5,000 records each while one consumer keeps
     * consuming and another, twenty times over, joins, polls until it gets records and closes
     * without acknowledging them (explicit mode: close gives them back). Exactly the 20,000 records
     * are accept-confirmed, each once, all by the long-lived consumer.
     */
    @Test
    void failingConsumerConcurrent() throws Exception {
        String topic = "failing-concurrent";
        String group = topic + "-group";
        ShareClients clients = new ShareClients(PIER.bootstrapServers());
        clients.createTopic(topic, 1);
        clients.setGroupConfig(group, "share.auto.offset.reset", "earliest");
        // A close gives records back with their delivery count, as Kafka does: a record that one
        // failing consumer after another took would be archived at the default limit of 5 (chains
        // of three were seen), and rightly never confirmed. The highest limit keeps the count of
        // 20,000 the expected outcome.
        clients.setGroupConfig(group, "share.delivery.count.limit", "10");
        // The lock is left at its default (30 s): records come back because each close gives them back.
        long lockMs = 30_000;

        Map<String, List<Event>> reports = new ConcurrentHashMap<>();
        Map<String, Long> closedAt = new ConcurrentHashMap<>();
        List<Event> longLived = new CopyOnWriteArrayList<>();
        reports.put("long-lived", longLived);
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        Thread consumer = new Thread(() -> {
            try (KafkaShareConsumer<String, String> c = shareConsumer(group, topic)) {
                long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
                while (!stop.get() && System.nanoTime() < deadline) {
                    pollAndAccept(c, longLived);
                }
            } catch (Throwable t) {
                errors.add(t);
            }
        }, "long-lived");
        Thread failing = new Thread(() -> {
            try {
                for (int round = 1; round <= 20 && !stop.get(); round++) {
                    List<Event> events = new ArrayList<>();
                    try (KafkaShareConsumer<String, String> c = shareConsumer(group, topic)) {
                        for (int polls = 0; polls < 20 && events.isEmpty(); polls++) {
                            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(250))) {
                                events.add(new Event("DELIVERED", r.offset(), r.deliveryCount().orElse((short) -1),
                                        "", System.currentTimeMillis()));
                            }
                        }
                        reports.put("failing-" + round, events);
                        // Closed here without a single acknowledgement.
                        closedAt.put("failing-" + round, System.currentTimeMillis());
                    }
                    // Spread over the produce load, with the long-lived consumer at work in between.
                    Thread.sleep(200);
                }
            } catch (Throwable t) {
                errors.add(t);
            }
        }, "failing");
        consumer.start();
        failing.start();
        toClose.add(() -> {
            stop.set(true);
            consumer.join(30_000);
            failing.join(30_000);
        });
        List<SteadyProducer> producers = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            producers.add(producer(topic, "p" + p + "-", 1_000, 5_000));
        }
        Map<Long, String> acked = new HashMap<>();
        for (SteadyProducer p : producers) {
            p.awaitDone(Duration.ofSeconds(60));
            acked.putAll(p.acked);
        }
        failing.join(Duration.ofSeconds(60).toMillis());
        assertThat(failing.isAlive()).as("failing consumer's rounds done").isFalse();
        try {
            await("every record accept-confirmed").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        assertThat(errors).isEmpty();
                        return longLived.stream().filter(e -> e.kind().equals("CONFIRMED")).count() >= acked.size();
                    });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(stuck(reports, acked.keySet(), group, topic, consumer), e);
        } finally {
            stop.set(true);
            consumer.join(Duration.ofSeconds(30).toMillis());
        }
        assertThat(consumer.isAlive()).as("long-lived consumer stopped").isFalse();
        assertThat(errors).isEmpty();

        assertThat(acked).as("records acknowledged").hasSize(20_000);
        Oracle oracle = Oracle.of(reports, closedAt);
        oracle.assertInvariants(acked.keySet());
        long rounds = reports.keySet().stream().filter(n -> n.startsWith("failing-")).count();
        long roundsWithRecords = reports.entrySet().stream()
                .filter(e -> e.getKey().startsWith("failing-") && !e.getValue().isEmpty()).count();
        assertThat(rounds).as("failing rounds").isEqualTo(20);
        // The fault happened: records were given back by closes, not just never taken.
        assertThat(roundsWithRecords).as("failing rounds that got records").isPositive();
        Handover handover = oracle.assertHandedOverWithin(lockMs / 3, lockMs, false);
        assertLogAndStartOffset(topic, acked);
        System.out.printf("ConsumerFailureIT S15: %d of 20 failing rounds got records; %s; highest delivery count"
                + " %d; released records redelivered at most %d ms after the close (lock %d ms)%n", roundsWithRecords,
                oracle.summary(), oracle.highestCount(), handover.sinceEnd(), lockMs);
    }

    /** What a run that never finished looks like: the records never confirmed and what became of them. */
    private static String stuck(Map<String, List<Event>> reports, Set<Long> acked, String group, String topic,
            Thread consumer) throws Exception {
        Set<Long> confirmed = new HashSet<>();
        Map<Long, List<String>> history = new TreeMap<>();
        reports.forEach((member, events) -> events.forEach(e -> {
            if (e.kind().equals("CONFIRMED")) {
                confirmed.add(e.offset());
            }
            history.computeIfAbsent(e.offset(), k -> new ArrayList<>())
                    .add(member + " " + e.kind() + " " + e.count() + " @" + e.atMs());
        }));
        List<Long> missing = new TreeSet<>(acked).stream().filter(o -> !confirmed.contains(o)).toList();
        StringBuilder sb = new StringBuilder();
        sb.append(missing.size()).append(" of ").append(acked.size()).append(" records never accept-confirmed; ")
                .append("group start offset ").append(PartitionReader.shareStartOffset(PIER.bootstrapServers(), group,
                        topic)).append("; now @").append(System.currentTimeMillis()).append('\n');
        missing.stream().limit(10).forEach(o -> sb.append("  offset ").append(o).append(": ")
                .append(history.getOrDefault(o, List.of())).append('\n'));
        sb.append("long-lived consumer thread ").append(consumer.getState()).append(":\n");
        for (StackTraceElement f : consumer.getStackTrace()) {
            sb.append("    at ").append(f).append('\n');
        }
        return sb.toString();
    }

    private Crew crew(String topic) throws Exception {
        String group = topic + "-group";
        ShareClients clients = new ShareClients(PIER.bootstrapServers());
        clients.createTopic(topic, 1);
        clients.setGroupConfig(group, "share.auto.offset.reset", "earliest");
        clients.setGroupConfig(group, "share.record.lock.duration.ms", String.valueOf(LOCK_MS));
        Crew crew = new Crew(topic, group);
        toClose.add(crew);
        return crew;
    }

    private SteadyProducer producer(String topic, String prefix, int perSecond, int max) {
        SteadyProducer p = new SteadyProducer(PIER.bootstrapServers(), topic, prefix, perSecond, max);
        toClose.add(p);
        return p;
    }

    /** Every acknowledged record in the log once, with its value; the group's start offset at the log end. */
    private static void assertLogAndStartOffset(String topic, Map<Long, String> acked) throws Exception {
        assertThat(PartitionReader.readAll(PIER.bootstrapServers(), topic)).as("the log, each record once")
                .isEqualTo(new TreeMap<>(acked));
        assertThat(PartitionReader.shareStartOffset(PIER.bootstrapServers(), topic + "-group", topic))
                .as("the group's start offset at the log end").isEqualTo(acked.size());
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String group, String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", "explicit");
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p, new StringDeserializer(),
                new StringDeserializer());
        c.subscribe(Set.of(topic));
        return c;
    }

    /**
     * The longest time, in ms, a held record took to be delivered again: from its holder's end, and
     * from the group's first delivery after that end.
     */
    private record Handover(long sinceEnd, long sinceNextDelivery) {}

    /** The child consumers of one group on one topic, and when each was ended. */
    private static final class Crew implements AutoCloseable {
        private final String topic;
        private final String group;
        private final Map<String, ChildShareConsumer> children = new LinkedHashMap<>();
        private final Map<String, Path> outputs = new LinkedHashMap<>();
        /** Member name to the wall-clock time just before it was sent SIGTERM or SIGKILL. */
        final Map<String, Long> endedAt = new LinkedHashMap<>();

        Crew(String topic, String group) {
            this.topic = topic;
            this.group = group;
        }

        String start() throws Exception {
            String name = "c" + (children.size() + 1);
            Path output = Files.createTempFile(topic + "-" + name + "-", ".log");
            outputs.put(name, output);
            children.put(name, new ChildShareConsumer(output, AcceptingShareConsumer.class,
                    PIER.bootstrapServers(), topic, group, String.valueOf(WORK_MS)));
            return name;
        }

        /** Waits until each has had an ACCEPT confirmed: it is a member with the partition and working. */
        void awaitWorking(List<String> names) {
            for (String name : names) {
                ChildShareConsumer child = children.get(name);
                await(name + " working").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                        .until(() -> {
                            assertThat(child.alive()).as("%s running; output:%n%s", name, child.output()).isTrue();
                            return child.events().stream().anyMatch(e -> e.kind().equals("CONFIRMED"));
                        });
            }
        }

        /**
         * Has each hold its next poll, then ends them all together: SIGKILL if {@code hard}, else
         * SIGTERM, after which each must have dropped what it held, closed, and exited 143.
         */
        void holdThenEnd(List<String> names, boolean hard) throws Exception {
            for (String name : names) {
                children.get(name).command(AcceptingShareConsumer.HOLD);
            }
            for (String name : names) {
                ChildShareConsumer child = children.get(name);
                await(name + " holding a poll").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                        .until(() -> child.events().stream().anyMatch(e -> e.kind().equals("HOLDING")));
            }
            for (String name : names) {
                endedAt.put(name, System.currentTimeMillis());
                if (hard) {
                    children.get(name).kill();
                } else {
                    children.get(name).terminate();
                }
            }
            for (String name : names) {
                ChildShareConsumer child = children.get(name);
                assertThat(child.waitFor(30)).as("%s ended; output:%n%s", name, child.output()).isTrue();
                assertThat(child.exitValue()).as("%s exit code (128 + signal)", name).isEqualTo(hard ? 137 : 143);
                if (!hard) {
                    List<Event> events = child.events();
                    String held = events.stream().filter(e -> e.kind().equals("HOLDING")).findFirst()
                            .orElseThrow().detail();
                    assertThat(events).as("%s's clean shutdown", name)
                            .anySatisfy(e -> assertThat(e).extracting(Event::kind, Event::detail)
                                    .containsExactly("DROPPED", held))
                            .last().extracting(Event::kind).isEqualTo("CLOSED");
                }
            }
        }

        void awaitAllConfirmed(Set<Long> acked) {
            await("every acknowledged record accept-confirmed").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        Set<Long> confirmed = new HashSet<>();
                        for (ChildShareConsumer child : children.values()) {
                            child.events().stream().filter(e -> e.kind().equals("CONFIRMED"))
                                    .forEach(e -> confirmed.add(e.offset()));
                        }
                        return confirmed.containsAll(acked);
                    });
        }

        /** Stops every consumer still running; each must close and exit 0. */
        void stopLive() throws Exception {
            List<String> live = children.keySet().stream().filter(n -> !endedAt.containsKey(n)).toList();
            for (String name : live) {
                children.get(name).command(AcceptingShareConsumer.STOP);
            }
            for (String name : live) {
                ChildShareConsumer child = children.get(name);
                assertThat(child.waitFor(30)).as("%s closed; output:%n%s", name, child.output()).isTrue();
                assertThat(child.exitValue()).as("%s exit code; output:%n%s", name, child.output()).isZero();
            }
        }

        Map<String, List<Event>> reports() throws Exception {
            Map<String, List<Event>> reports = new LinkedHashMap<>();
            for (Map.Entry<String, ChildShareConsumer> e : children.entrySet()) {
                reports.put(e.getKey(), e.getValue().events());
            }
            return reports;
        }

        @Override
        public void close() throws Exception {
            for (ChildShareConsumer child : children.values()) {
                child.close();
            }
            for (Path output : outputs.values()) {
                Files.deleteIfExists(output);
            }
        }
    }

    /**
     * What the consumers reported, checked against the invariants. A delivery is one
     * {@code DELIVERED} event: which member, offset, delivery count and time.
     */
    private static final class Oracle {
        private record Delivery(String member, long offset, short count, long atMs) {
            /** The same delivery, seen at another time (a delivery and the confirmation of its ACCEPT). */
            boolean sameAs(Delivery other) {
                return other != null && untimed().equals(other.untimed());
            }

            Delivery untimed() {
                return new Delivery(member, offset, count, 0);
            }
        }

        private final Map<Long, List<Delivery>> deliveries = new TreeMap<>();
        /** Offset to the delivery whose ACCEPT was confirmed, first confirmation only. */
        private final Map<Long, Delivery> confirmed = new TreeMap<>();
        /** Every confirmed ACCEPT, first or not, {@link Delivery#untimed}. */
        private final Set<Delivery> confirmations = new HashSet<>();
        private final List<String> confirmedTwice = new ArrayList<>();
        private final List<Event> refused = new ArrayList<>();
        private final Map<String, Long> endedAt;

        private Oracle(Map<String, Long> endedAt) {
            this.endedAt = Map.copyOf(endedAt);
        }

        static Oracle of(Map<String, List<Event>> reports, Map<String, Long> endedAt) {
            Oracle o = new Oracle(endedAt);
            reports.forEach((member, events) -> {
                for (Event e : events) {
                    Delivery d = new Delivery(member, e.offset(), e.count(), e.atMs());
                    switch (e.kind()) {
                        case "DELIVERED" -> o.deliveries.computeIfAbsent(e.offset(), k -> new ArrayList<>()).add(d);
                        case "CONFIRMED" -> {
                            o.confirmations.add(d.untimed());
                            Delivery before = o.confirmed.putIfAbsent(e.offset(), d);
                            if (before != null) {
                                o.confirmedTwice.add(before + " and " + d);
                            }
                        }
                        case "REFUSED" -> o.refused.add(e);
                        default -> { }
                    }
                }
            });
            o.deliveries.values().forEach(l -> l.sort(Comparator.comparingInt(Delivery::count)));
            return o;
        }

        /** The records each ended member was delivered and did not have confirmed. */
        private List<Delivery> held() {
            List<Delivery> held = new ArrayList<>();
            deliveries.values().forEach(list -> list.stream()
                    .filter(d -> endedAt.containsKey(d.member()) && !confirmations.contains(d.untimed()))
                    .forEach(held::add));
            return held;
        }

        /** The delivery of the same offset after {@code d}, if any. */
        private Optional<Delivery> next(Delivery d) {
            return deliveries.get(d.offset()).stream().filter(n -> n.count() > d.count()).findFirst();
        }

        boolean handedOver() {
            return held().stream().allMatch(d -> next(d).isPresent());
        }

        /**
         * Every record an ended member held was delivered again, to another member, with the next
         * delivery count, at most {@code withinMs} after the group's first delivery (to anyone)
         * following that member's end: the held records come back with the survivors' next polls,
         * or with the replacements' first ones when none survived. If {@code eachHeldSome}, each
         * ended member held some.
         *
         * @return the longest hand-over, from the end and from that first delivery, in ms
         */
        Handover assertHandedOverWithin(long withinMs, long lockMs, boolean eachHeldSome) {
            List<Delivery> held = held();
            if (eachHeldSome) {
                Set<String> holders = held.stream().map(Delivery::member).collect(Collectors.toSet());
                assertThat(holders).as("ended members that held records").containsAll(endedAt.keySet());
            }
            long sinceEnd = 0;
            long sinceNextDelivery = 0;
            for (Delivery d : held) {
                Delivery n = next(d).orElseThrow(() -> new AssertionError(d + " never delivered again"));
                assertThat(n.member()).as("%s delivered again", d).isNotEqualTo(d.member());
                assertThat(n.count()).as("%s delivered again", d).isEqualTo((short) (d.count() + 1));
                long end = endedAt.get(d.member());
                long took = n.atMs() - firstDeliveryFrom(end);
                assertThat(took).as("ms from the group's first delivery after the end of %s to %s (lock %d ms)",
                        d.member(), n, lockMs).isLessThanOrEqualTo(withinMs);
                sinceNextDelivery = Math.max(sinceNextDelivery, took);
                sinceEnd = Math.max(sinceEnd, n.atMs() - end);
            }
            return new Handover(sinceEnd, sinceNextDelivery);
        }

        private long firstDeliveryFrom(long atMs) {
            return deliveries.values().stream().flatMap(List::stream).mapToLong(Delivery::atMs)
                    .filter(t -> t >= atMs).min().orElse(atMs);
        }

        short highestCount() {
            return deliveries.values().stream().map(l -> l.get(l.size() - 1).count()).max(Short::compare).orElseThrow();
        }

        /**
         * I1 and exactly once: the confirmed ACCEPTs are those of the acknowledged records, one
         * each. I5: each record's last delivery is the one whose ACCEPT was confirmed. I7: its
         * deliveries carry the counts 1, 2, ..., each once. I8 and I11: each delivery but the last
         * went to a member that was ended, and the next one came after that end.
         */
        void assertInvariants(Set<Long> acked) {
            assertThat(confirmedTwice).as("offsets whose ACCEPT was confirmed twice").isEmpty();
            assertThat(confirmed.keySet()).as("accept-confirmed offsets: the acknowledged records").isEqualTo(
                    new TreeSet<>(acked));
            List<String> violations = new ArrayList<>();
            deliveries.forEach((offset, list) -> {
                List<Short> counts = list.stream().map(Delivery::count).toList();
                List<Short> expected = IntStream.rangeClosed(1, list.size()).mapToObj(i -> (short) i).toList();
                if (!counts.equals(expected)) {
                    violations.add("offset " + offset + " delivered with counts " + counts);
                }
                Delivery last = list.get(list.size() - 1);
                if (!last.sameAs(confirmed.get(offset))) {
                    violations.add("offset " + offset + ": last delivery " + last + ", ACCEPT confirmed for "
                            + confirmed.get(offset));
                }
                for (int i = 0; i + 1 < list.size(); i++) {
                    Delivery d = list.get(i);
                    Delivery n = list.get(i + 1);
                    Long end = endedAt.get(d.member());
                    if (end == null) {
                        violations.add("offset " + offset + " delivered again (" + n + ") though " + d
                                + " went to a member that was not ended");
                    } else if (n.atMs() < end - CLOCK_MARGIN_MS) {
                        violations.add("offset " + offset + " delivered again (" + n + ") before its holder "
                                + d.member() + " was ended at " + end);
                    }
                }
            });
            assertThat(violations).as("I5, I7, I8, I11 violations").isEmpty();
            assertThat(refused).as("refused ACCEPTs (no lock runs out here)").isEmpty();
        }

        Map<String, Long> confirmedBy() {
            return confirmed.values().stream().collect(Collectors.groupingBy(Delivery::member, Collectors.counting()));
        }

        String summary() {
            long all = deliveries.values().stream().mapToLong(List::size).sum();
            return String.format("%d deliveries of %d records (%d redelivered), %d ACCEPTs confirmed, by %s", all,
                    deliveries.size(), all - deliveries.size(), confirmed.size(), new TreeMap<>(confirmedBy()));
        }
    }

    /**
     * An idempotent producer (acks=all) on its own thread writing {@code prefix + i} to partition
     * 0 at a steady rate, until {@code max} records or {@link #stop}; notes each acknowledged
     * record's offset and value.
     */
    private static final class SteadyProducer implements AutoCloseable {
        final Map<Long, String> acked = new ConcurrentHashMap<>();
        private final List<Exception> errors = new CopyOnWriteArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Thread thread;
        private volatile int sent;

        SteadyProducer(String bootstrap, String topic, String prefix, int perSecond, int max) {
            thread = new Thread(() -> run(bootstrap, topic, prefix, perSecond, max), topic + "-" + prefix + "producer");
            thread.start();
        }

        private void run(String bootstrap, String topic, String prefix, int perSecond, int max) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("acks", "all");
            p.put("enable.idempotence", "true");
            p.put("linger.ms", "5");
            try (KafkaProducer<String, String> producer =
                    new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                long start = System.nanoTime();
                for (int i = 0; i < max && !stop.get(); i++) {
                    long dueMs = (start + i * 1_000_000_000L / perSecond - System.nanoTime()) / 1_000_000;
                    if (dueMs > 0) {
                        Thread.sleep(dueMs);
                    }
                    String value = prefix + i;
                    var unused = producer.send(new ProducerRecord<>(topic, 0, null, value), (md, e) -> {
                        if (e == null) {
                            acked.put(md.offset(), value);
                        } else {
                            errors.add(e);
                        }
                    });
                    sent = i + 1;
                }
                producer.flush();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                errors.add(e);
            }
        }

        /** Stops writing, waits for the last acknowledgements; every record sent was acknowledged. */
        void stop() throws InterruptedException {
            stop.set(true);
            awaitDone(Duration.ofSeconds(30));
        }

        void awaitDone(Duration within) throws InterruptedException {
            thread.join(within.toMillis());
            assertThat(thread.isAlive()).as("producer done").isFalse();
            assertThat(errors).as("send errors").isEmpty();
            assertThat(acked).as("records acknowledged: every one sent").hasSize(sent);
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(30_000);
        }
    }
}
