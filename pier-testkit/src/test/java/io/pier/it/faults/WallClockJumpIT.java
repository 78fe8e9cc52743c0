package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.common.JumpingClock;
import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario S25 of the reliability reference: the broker's wall clock steps an hour forwards, then
 * two hours back, while real share consumers hold records and stay in their group. The broker
 * runs on an injected clock whose monotonic time moves only when the test moves it, so every
 * deadline can be checked to the millisecond: a record lock ends exactly when monotonic time
 * reaches it, not an hour early after the step forwards and not an hour late after the step back,
 * and the late ACCEPT of its first holder is refused. The members' sessions outlive both steps.
 * Produce goes on, its timestamps checked against the stepped clock as Kafka checks them:
 * CreateTime records are stored with the producer's timestamps while those are within
 * {@code message.timestamp.after.max.ms} (an hour) of the broker's clock, and refused with
 * INVALID_TIMESTAMP once the step back leaves them more than that ahead; LogAppendTime records
 * are stamped with the broker's stepped wall clock.
 */
@Timeout(60)
class WallClockJumpIT {
    private static final long HOUR_MS = 3_600_000;
    private static final long LOCK_MS = 2_000;
    private static final String GROUP = "wall-jump-group";

    private final JumpingClock clock = new JumpingClock(System.currentTimeMillis());
    private Pier pier;
    private ShareClients clients;

    @BeforeEach
    void start() throws Exception {
        pier = Pier.builder().clock(clock).config("group.share.min.record.lock.duration.ms", "1000").start();
        clients = new ShareClients(pier.bootstrapServers());
    }

    @AfterEach
    void stop() {
        if (pier != null) {
            pier.close();
        }
    }

    @Test
    void shouldEndARecordLockExactlyAtItsMonotonicDeadlineWhenTheWallClockStepsAnHourEitherWay() throws Exception {
        String topic = "wall-jump";
        clients.createTopic(topic, 1);
        clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest");
        clients.setGroupConfig(GROUP, "share.record.lock.duration.ms", String.valueOf(LOCK_MS));
        clients.produce(topic, 0, "r", 3);
        try (KafkaShareConsumer<String, String> a = shareConsumer();
                KafkaShareConsumer<String, String> b = shareConsumer();
                Admin admin = clients.admin()) {
            // Given A holding the three records; its lock runs until monotonic time LOCK_MS
            a.subscribe(Set.of(topic));
            List<ConsumerRecord<String, String>> heldByA = pollFor(a, 3);
            assertThat(counts(heldByA)).containsExactly(1, 1, 1);
            b.subscribe(Set.of(topic));

            // When the wall clock steps an hour forwards and 1 ms less than the lock passes
            clock.stepWall(HOUR_MS);
            clock.advance(LOCK_MS - 1);

            // Then B gets nothing: the lock holds
            assertThat(pollFor(b, 1, 5)).as("B's polls while A's lock holds").isEmpty();
            assertThat(members(admin)).as("members after the step forwards").isEqualTo(2);

            // ... and 1 ms later it ends: B gets them again, and A's late ACCEPT is refused
            clock.advance(1);
            List<ConsumerRecord<String, String>> heldByB = pollFor(b, 3);
            assertThat(counts(heldByB)).containsExactly(2, 2, 2);
            assertThat(accept(a, heldByA)).containsInstanceOf(InvalidRecordStateException.class);

            // When the wall clock steps two hours back (an hour behind where it began) and again
            // 1 ms less than the lock passes
            clock.stepWall(-2 * HOUR_MS);
            clock.advance(LOCK_MS - 1);

            // Then A gets nothing: B's lock holds
            assertThat(pollFor(a, 1, 5)).as("A's polls while B's lock holds").isEmpty();
            assertThat(members(admin)).as("members after the step back").isEqualTo(2);

            // ... and 1 ms later it ends: A gets them a third time and its ACCEPT counts; B's is refused
            clock.advance(1);
            List<ConsumerRecord<String, String>> third = pollFor(a, 3);
            assertThat(counts(third)).containsExactly(3, 3, 3);
            assertThat(accept(a, third)).isEmpty();
            assertThat(accept(b, heldByB)).containsInstanceOf(InvalidRecordStateException.class);
        }
        assertThat(PartitionReader.shareStartOffset(pier.bootstrapServers(), GROUP, topic))
                .as("the group's start offset past the three accepted records").isEqualTo(3);
    }

    @Test
    void shouldCheckProducerTimestampsAndStampLogAppendTimeAgainstTheSteppedWallClock() throws Exception {
        try (Admin admin = clients.admin()) {
            admin.createTopics(List.of(new NewTopic("create-time", 1, (short) 1),
                    new NewTopic("append-time", 1, (short) 1)
                            .configs(Map.of("message.timestamp.type", "LogAppendTime")))).all().get();
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", pier.bootstrapServers());
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        List<Long> brokerWall = new ArrayList<>();
        long accepted;
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            // When the broker's wall clock steps an hour on, the producer's own clock not
            clock.stepWall(HOUR_MS);
            accepted = System.currentTimeMillis();
            brokerWall.add(clock.wallMs());
            // Then a record stamped an hour behind the broker is stored with its stamp (no limit behind)
            RecordMetadata created = producer.send(new ProducerRecord<>("create-time", 0, accepted, null, "c")).get();
            assertThat(created.timestamp()).as("CreateTime acknowledged").isEqualTo(accepted);
            RecordMetadata appended = producer.send(new ProducerRecord<>("append-time", 0, accepted, null, "a")).get();
            assertThat(appended.timestamp()).as("LogAppendTime acknowledged").isEqualTo(clock.wallMs());

            // When it steps two hours back, the producer's stamps are an hour and some ms ahead of it
            clock.stepWall(-2 * HOUR_MS);
            long ahead = System.currentTimeMillis();
            brokerWall.add(clock.wallMs());
            // Then the CreateTime record is refused as Kafka 4 refuses it (after.max.ms: an hour)
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>("create-time", 0, ahead, null, "late")).get())
                    .hasCauseInstanceOf(InvalidTimestampException.class)
                    .hasMessageContaining("Timestamp " + ahead + " of message with offset 0 is out of range");
            // and the LogAppendTime topic, which checks nothing, stamps it with its clock
            appended = producer.send(new ProducerRecord<>("append-time", 0, ahead, null, "a")).get();
            assertThat(appended.timestamp()).as("LogAppendTime acknowledged").isEqualTo(clock.wallMs());
        }
        assertThat(stamps("create-time")).containsExactly(Map.entry(TimestampType.CREATE_TIME, accepted));
        assertThat(stamps("append-time")).containsExactly(
                Map.entry(TimestampType.LOG_APPEND_TIME, brokerWall.get(0)),
                Map.entry(TimestampType.LOG_APPEND_TIME, brokerWall.get(1)));
    }

    /**
     * A share consumer whose fetches the broker answers at once. On the broker's stopped clock a
     * fetch parked for its MaxWaitMs would stay parked until the test moves the clock, and the
     * client sends no acknowledgement while a fetch of its is under way.
     */
    private KafkaShareConsumer<String, String> shareConsumer() {
        return clients.consumer(GROUP, "explicit", "fetch.max.wait.ms", "0");
    }

    /** The timestamp type and timestamp of each record of partition 0, in offset order. */
    private List<Map.Entry<TimestampType, Long>> stamps(String topic) {
        Properties p = new Properties();
        p.put("bootstrap.servers", pier.bootstrapServers());
        // Fetches answered at once, as for the share consumers (the broker's clock is stopped)
        p.put("fetch.max.wait.ms", "0");
        List<Map.Entry<TimestampType, Long>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            for (int i = 0; i < 100 && out.size() < 2; i++) {
                c.poll(Duration.ofMillis(100)).forEach(r -> out.add(Map.entry(r.timestampType(), r.timestamp())));
            }
        }
        return out;
    }

    /** Polls until {@code count} records came, for at most 100 polls; returns what came. */
    private static List<ConsumerRecord<String, String>> pollFor(KafkaShareConsumer<String, String> c, int count) {
        return pollFor(c, count, 100);
    }

    private static List<ConsumerRecord<String, String>> pollFor(KafkaShareConsumer<String, String> c, int count,
            int polls) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        for (int i = 0; i < polls && got.size() < count; i++) {
            c.poll(Duration.ofMillis(100)).forEach(got::add);
        }
        return got;
    }

    private static List<Integer> counts(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(r -> (int) r.deliveryCount().orElseThrow()).toList();
    }

    /** ACCEPTs {@code records} in one commit; the broker's answer for their partition. */
    private static Optional<KafkaException> accept(KafkaShareConsumer<String, String> c,
            List<ConsumerRecord<String, String>> records) {
        records.forEach(r -> c.acknowledge(r, AcknowledgeType.ACCEPT));
        Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofSeconds(10));
        assertThat(result).as("one answer, for the one partition").hasSize(1);
        return result.values().iterator().next();
    }

    private static int members(Admin admin) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of(GROUP)).all().get().get(GROUP);
        return d.members().size();
    }
}
