package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.common.ManualClock;
import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The broker's deadlines run on its injected clock, not on real time: a long poll's MaxWaitMs, an
 * acquisition lock and a share-group member's session each end when a manual clock is moved past
 * them, minutes of broker time in a fraction of a second of test time.
 */
@Timeout(60)
class ManualClockIT {
    /** Starts at the real time: the producers stamp records with theirs, checked against this one. */
    private final ManualClock clock = new ManualClock(System.currentTimeMillis());
    private Pier pier;
    private ShareClients clients;

    @BeforeEach
    void start() throws Exception {
        pier = Pier.builder().clock(clock).start();
        clients = new ShareClients(pier.bootstrapServers());
    }

    @AfterEach
    void stop() {
        pier.close();
    }

    @Test
    void shouldAnswerAParkedFetchOnlyWhenMaxWaitPassesOnTheBrokersClock() throws Exception {
        clients.createTopic("mc-fetch", 1);
        short version = 12;
        RequestHeader header = new RequestHeader(ApiKeys.FETCH, version, "manual-clock", 7);
        FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(600_000).setMinBytes(1)
                .setMaxBytes(1 << 20);
        fetch.topics().add(new FetchRequestData.FetchTopic().setTopic("mc-fetch").setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20))));
        try (RawKafkaClient raw = RawKafkaClient.connect(pier.bootstrapServers(), Duration.ofMillis(300))) {
            raw.sendFrame(RawKafkaClient.serialize(header, fetch, version));

            assertThat(raw.receive()).as("parked: MaxWaitMs of 10 minutes").isInstanceOf(RawKafkaClient.TimedOut.class);
            clock.advance(600_000);

            RawKafkaClient.Received answer = raw.receive();
            for (int i = 0; i < 20 && answer instanceof RawKafkaClient.TimedOut; i++) {
                answer = raw.receive();
            }
            assertThat(answer).isInstanceOf(RawKafkaClient.Frame.class);
            FetchResponse response = (FetchResponse) AbstractResponse.parseResponse(
                    ((RawKafkaClient.Frame) answer).bytes(), header);
            FetchResponseData data = response.data();
            FetchResponseData.PartitionData partition = data.responses().get(0).partitions().get(0);
            assertThat(partition.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(partition.highWatermark()).isZero();
        }
    }

    /**
     * A Fetch that names no partition needs no data, so it is answered at once, whatever its
     * MaxWaitMs: Kafka's ReplicaManager.fetchMessages responds immediately when the fetch has no
     * partitions. KafkaConsumer.close() sends such a fetch (session id 0, epoch -1) to end its
     * fetch session and waits for the answer. Pier used to park it until MaxWaitMs passed on its
     * clock, so every close of a KafkaConsumer took fetch.max.wait.ms (500 ms by default) longer
     * than against Kafka, and on this test's stopped clock it got no answer at all.
     */
    @Test
    void shouldAnswerAFetchForNoPartitionsAtOnce() throws Exception {
        short version = 12;
        RequestHeader header = new RequestHeader(ApiKeys.FETCH, version, "manual-clock", 9);
        // as KafkaConsumer.close() ends its fetch session: no partitions, the final epoch
        FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(600_000).setMinBytes(1)
                .setMaxBytes(1 << 20).setSessionId(0).setSessionEpoch(-1);
        try (RawKafkaClient raw = RawKafkaClient.connect(pier.bootstrapServers(), Duration.ofMillis(300))) {
            raw.sendFrame(RawKafkaClient.serialize(header, fetch, version));

            RawKafkaClient.Received answer = raw.receive();
            for (int i = 0; i < 10 && answer instanceof RawKafkaClient.TimedOut; i++) {
                answer = raw.receive();
            }
            assertThat(answer).as("an answer within 3 s, the broker's clock stopped")
                    .isInstanceOf(RawKafkaClient.Frame.class);
            FetchResponse response = (FetchResponse) AbstractResponse.parseResponse(
                    ((RawKafkaClient.Frame) answer).bytes(), header);
            assertThat(response.error()).isEqualTo(Errors.NONE);
            assertThat(response.data().responses()).isEmpty();
        }
    }

    @Test
    void shouldHandAnUnacknowledgedRecordToAnotherMemberWhenItsLockExpiresOnTheBrokersClock() throws Exception {
        clients.createTopic("mc-lock", 1);
        clients.setGroupConfig("g-lock", "share.auto.offset.reset", "earliest");
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", pier.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>("mc-lock", 0, null, "m-" + i)).get();
            }
        }
        Map<String, Short> seenByB = new HashMap<>();
        try (KafkaShareConsumer<String, String> a = clients.consumer("g-lock", "explicit");
                KafkaShareConsumer<String, String> b = clients.consumer("g-lock", "explicit")) {
            a.subscribe(Set.of("mc-lock"));
            Map<String, ConsumerRecord<String, String>> held = new HashMap<>();
            for (int i = 0; i < 100 && held.size() < 3; i++) {
                a.poll(Duration.ofMillis(200)).forEach(r -> held.put(r.value(), r));
            }
            assertThat(held).containsOnlyKeys("m-0", "m-1", "m-2");

            b.subscribe(Set.of("mc-lock"));
            for (int i = 0; i < 5; i++) {
                assertThat(b.poll(Duration.ofMillis(100)).count()).as("locked by A, the clock has not moved").isZero();
            }
            // The default record lock is 30 s of broker time; A's group session (45 s) stays alive.
            clock.advance(30_001);
            for (int i = 0; i < 100 && seenByB.size() < 3; i++) {
                b.poll(Duration.ofMillis(200)).forEach(r -> {
                    seenByB.put(r.value(), r.deliveryCount().orElseThrow());
                    b.acknowledge(r, AcknowledgeType.ACCEPT);
                });
            }
            b.commitSync();
        }
        assertThat(seenByB).containsOnlyKeys("m-0", "m-1", "m-2")
                .allSatisfy((k, v) -> assertThat(v).isEqualTo((short) 2));
    }

    @Test
    void shouldConfirmAcknowledgementsAtOnceWithoutWaitingForNewRecords() throws Exception {
        clients.createTopic("mc-ack", 1);
        clients.setGroupConfig("g-ack", "share.auto.offset.reset", "earliest");
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", pier.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps, new StringSerializer(),
                new StringSerializer())) {
            producer.send(new ProducerRecord<>("mc-ack", 0, null, "only")).get();
        }
        Set<Long> confirmed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (KafkaShareConsumer<String, String> c = clients.consumer("g-ack", "explicit")) {
            c.setAcknowledgementCommitCallback((offsets, e) -> {
                if (e == null) {
                    offsets.values().forEach(confirmed::addAll);
                }
            });
            c.subscribe(Set.of("mc-ack"));
            ConsumerRecord<String, String> got = null;
            for (int i = 0; i < 100 && got == null; i++) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    got = r;
                }
            }
            assertThat(got).isNotNull();
            c.acknowledge(got, AcknowledgeType.ACCEPT);
            // The next fetch carries the ACCEPT and finds nothing new. With the broker's clock
            // stopped, an answer parked for MaxWaitMs would never come: it must come at once.
            for (int i = 0; i < 25 && confirmed.isEmpty(); i++) {
                c.poll(Duration.ofMillis(200));
            }
            assertThat(confirmed).containsExactly(got.offset());
            // The consumer's next fetch is parked for its MaxWaitMs (500 ms) on the stopped clock,
            // and close() waits for it: let it end, or close() idles until request.timeout.ms.
            clock.advance(1_000);
        }
    }

    @Test
    void shouldExpireAShareGroupMembersSessionOnTheBrokersClock() throws Exception {
        clients.createTopic("mc-session", 1);
        String member = Uuid.randomUuid().toString();
        short version = 1;
        try (RawKafkaClient raw = RawKafkaClient.connect(pier.bootstrapServers());
                Admin admin = clients.admin()) {
            ShareGroupHeartbeatResponseData joined = heartbeat(raw, 1, new ShareGroupHeartbeatRequestData()
                    .setGroupId("g-session").setMemberId(member).setMemberEpoch(0)
                    .setSubscribedTopicNames(List.of("mc-session")), version);
            assertThat(joined.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(members(admin)).isEqualTo(1);

            // group.share.session.timeout.ms is 45 s by default.
            clock.advance(44_000);
            assertThat(members(admin)).as("still inside its session").isEqualTo(1);
            clock.advance(1_001);
            await().atMost(Duration.ofSeconds(10)).until(() -> members(admin) == 0);

            ShareGroupHeartbeatResponseData late = heartbeat(raw, 2, new ShareGroupHeartbeatRequestData()
                    .setGroupId("g-session").setMemberId(member).setMemberEpoch(joined.memberEpoch()), version);
            assertThat(late.errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
        }
    }

    private static ShareGroupHeartbeatResponseData heartbeat(RawKafkaClient raw, int correlationId,
            ShareGroupHeartbeatRequestData body, short version) throws Exception {
        RequestHeader header = new RequestHeader(ApiKeys.SHARE_GROUP_HEARTBEAT, version, "manual-clock", correlationId);
        raw.sendFrame(RawKafkaClient.serialize(header, body, version));
        return ((ShareGroupHeartbeatResponse) raw.receiveResponse(header)).data();
    }

    private static int members(Admin admin) throws Exception {
        ShareGroupDescription d = admin.describeShareGroups(List.of("g-session")).all().get().get("g-session");
        return d.members().size();
    }
}
