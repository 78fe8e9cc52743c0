package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.faults.ChildShareConsumer.Event;
import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A share consumer process paused with SIGSTOP while it holds records, past their lock
 * (reliability.md S16, the lock part; item 5 of the reliability campaign). Unlike a network
 * partition, its connections stay open and nothing tells the broker: only the lock's expiry frees
 * the records. Another consumer gets them with delivery count 2; when the paused one goes on, its
 * late ACCEPTs are refused with INVALID_RECORD_STATE (InvalidRecordStateException in its
 * acknowledgement-commit callback), it keeps consuming new records, and no record whose ACCEPT was
 * confirmed is delivered again, to either consumer. {@link ConsumerPausedPastSessionIT} pauses it
 * past its group session as well.
 */
@Timeout(120)
class PausedConsumerIT {
    private static final long LOCK_MS = 2_000;
    private static final int FIRST_RECORDS = 100;
    private static final int LATER_RECORDS = 20;

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.share.min.record.lock.duration.ms", "1000");

    private ChildShareConsumer child;
    private Path childOutput;

    @AfterEach
    void killChild() throws Exception {
        if (child != null) {
            child.close();
        }
        if (childOutput != null) {
            Files.deleteIfExists(childOutput);
        }
    }

    @Test
    void shouldRefuseLateAcceptsOfAConsumerPausedPastItsLockAndRedeliverNothingAccepted() throws Exception {
        String topic = "paused";
        String group = "paused-group";
        ShareClients clients = new ShareClients(PIER.bootstrapServers());
        clients.createTopic(topic, 1);
        clients.setGroupConfig(group, "share.auto.offset.reset", "earliest");
        clients.setGroupConfig(group, "share.record.lock.duration.ms", String.valueOf(LOCK_MS));
        Map<Long, String> acked = new ConcurrentHashMap<>();
        ProxiedShareLoad.produce(PIER.bootstrapServers(), topic, FIRST_RECORDS, acked, 30_000);

        // It ACCEPTs two polls of up to 10 records, then holds the third.
        childOutput = Files.createTempFile("paused-consumer-", ".log");
        child = new ChildShareConsumer(PIER.bootstrapServers(), topic, group, 3, childOutput);
        await("the child consumer holding records").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    assertThat(child.alive()).as("child running; output:\n%s", child.output()).isTrue();
                    return child.events().stream().anyMatch(e -> e.kind().equals("HOLDING"));
                });
        child.pause();
        long pausedAt = System.nanoTime();
        await("the child stopped").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(child::stopped);
        List<Long> held = held(child.events());
        assertThat(held).as("records the paused consumer holds").isNotEmpty();

        // Another consumer of the group takes everything left, the held records once their lock ran out.
        List<Event> others = new ArrayList<>();
        try (KafkaShareConsumer<String, String> other = clients.consumer(group, "explicit")) {
            other.subscribe(Set.of(topic));
            await("the other consumer accepting every record").atMost(Duration.ofSeconds(30))
                    .pollInSameThread().pollInterval(Duration.ofMillis(1))
                    .until(() -> {
                        pollAndAccept(other, others);
                        List<Event> both = new ArrayList<>(child.events());
                        both.addAll(others);
                        return confirmed(both).keySet().containsAll(acked.keySet());
                    });
        }
        Map<Long, Short> retaken = new HashMap<>();
        others.stream().filter(e -> e.kind().equals("DELIVERED") && held.contains(e.offset()))
                .forEach(e -> retaken.put(e.offset(), e.count()));
        assertThat(retaken).as("held records the other consumer got, with their delivery counts")
                .containsOnlyKeys(held).allSatisfy((o, count) -> assertThat(count).isEqualTo((short) 2));
        assertThat(child.stopped()).as("the child still paused").isTrue();
        // Past the lock by a margin, however fast the other consumer was.
        Thread.sleep(Math.max(0, LOCK_MS + 1_000 - Duration.ofNanos(System.nanoTime() - pausedAt).toMillis()));

        long pausedMs = Duration.ofNanos(System.nanoTime() - pausedAt).toMillis();
        child.resume();
        child.command(PausableShareConsumer.GO);
        await("the child's late ACCEPTs answered").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> child.events().stream()
                        .filter(e -> held.contains(e.offset()) && !e.kind().equals("DELIVERED"))
                        .count() == held.size());
        List<Event> late = child.events().stream()
                .filter(e -> held.contains(e.offset()) && !e.kind().equals("DELIVERED")).toList();
        assertThat(late).as("the late ACCEPTs, as the child's acknowledgement-commit callback saw them")
                .allSatisfy(e -> {
                    assertThat(e.kind()).isEqualTo("REFUSED");
                    assertThat(e.detail()).isEqualTo("InvalidRecordStateException");
                });

        // It goes on as a member: records written now reach it and its ACCEPTs of them count.
        int before = acked.size();
        ProxiedShareLoad.produce(PIER.bootstrapServers(), topic, LATER_RECORDS, acked, 30_000);
        Set<Long> later = new TreeMap<>(acked).tailMap((long) before).keySet();
        await("the resumed child accepting new records").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> confirmed(child.events()).keySet().containsAll(later));
        child.command(PausableShareConsumer.STOP);
        assertThat(child.waitFor(30)).as("child closed; output:\n%s", child.output()).isTrue();
        assertThat(child.exitValue()).as("child exit code; output:\n%s", child.output()).isZero();

        List<Event> all = new ArrayList<>(child.events());
        all.addAll(others);
        assertAcceptedIsFinal(all);
        assertThat(confirmed(all).keySet()).as("every record accepted by one of them").containsAll(acked.keySet());
        assertThat(PartitionReader.readAll(PIER.bootstrapServers(), topic)).as("the log, each record once")
                .isEqualTo(new TreeMap<>(acked));
        assertThat(PartitionReader.shareStartOffset(PIER.bootstrapServers(), group, topic))
                .as("the group's start offset at the log end").isEqualTo(acked.size());
        System.out.printf("PausedConsumerIT: %d records held while paused for %d ms, retaken with count 2; %d late"
                + " ACCEPTs refused; %d deliveries, %d ACCEPTs confirmed%n", held.size(), pausedMs, late.size(),
                all.stream().filter(e -> e.kind().equals("DELIVERED")).count(), confirmed(all).size());
    }

    /**
     * One poll of an in-process consumer, every record ACCEPTed and committed, noted as a child
     * notes its own, with the time of each event.
     */
    static void pollAndAccept(KafkaShareConsumer<String, String> consumer, List<Event> events) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        consumer.poll(Duration.ofMillis(100)).forEach(got::add);
        if (got.isEmpty()) {
            return;
        }
        for (ConsumerRecord<String, String> r : got) {
            events.add(new Event("DELIVERED", r.offset(), r.deliveryCount().orElse((short) -1), "",
                    System.currentTimeMillis()));
            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
        }
        Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(10));
        boolean ok = !result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty);
        long now = System.currentTimeMillis();
        for (ConsumerRecord<String, String> r : got) {
            events.add(new Event(ok ? "CONFIRMED" : "REFUSED", r.offset(), r.deliveryCount().orElse((short) -1),
                    ok ? "" : result.toString(), now));
        }
    }

    /** The offsets the child said it holds. */
    static List<Long> held(List<Event> events) {
        String offsets = events.stream().filter(e -> e.kind().equals("HOLDING")).findFirst().orElseThrow().detail();
        return Arrays.stream(offsets.split(" ")).map(Long::valueOf).toList();
    }

    /** Offset to the delivery count whose ACCEPT was confirmed; fails if one offset was confirmed twice. */
    static Map<Long, Short> confirmed(List<Event> events) {
        Map<Long, Short> confirmed = new HashMap<>();
        for (Event e : events) {
            if (e.kind().equals("CONFIRMED")) {
                Short before = confirmed.put(e.offset(), e.count());
                assertThat(before).as("offset %d confirmed twice (deliveries %s and %d)", e.offset(), before, e.count())
                        .isNull();
            }
        }
        return confirmed;
    }

    /**
     * I5 across two processes, without a common clock: delivery counts only grow, so a delivery of
     * an offset with a count above the one whose ACCEPT was confirmed came after that confirmation.
     */
    static void assertAcceptedIsFinal(List<Event> events) {
        Map<Long, Short> confirmed = confirmed(events);
        List<Event> after = events.stream()
                .filter(e -> e.kind().equals("DELIVERED") && confirmed.containsKey(e.offset())
                        && e.count() > confirmed.get(e.offset()))
                .toList();
        assertThat(after).as("deliveries after a confirmed ACCEPT").isEmpty();
    }
}
