package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Share sessions as Kafka 4.4 keeps them, for members the group does not know and for sessions
 * used from another connection (issue "Reliability campaign", "Bounded resources"). Run by hand
 * against Kafka 4.4 with the same raw requests: a ShareFetch at epoch 0 from a member id that never
 * joined the group is served (it acquires records); a session opened on one connection may go on
 * from another at the next epoch, after which the first connection's same epoch is
 * INVALID_SHARE_SESSION_EPOCH. What bounds an unknown member is its connection: when it closes,
 * its acquired records are released at once, long before their lock would expire.
 */
@Timeout(120)
class ShareSessionOwnershipIT {
    private static final String TOPIC = "session-owner";
    private static final String UNKNOWN_MEMBER = "never-joined-member-0000000";
    private static final short VERSION = ApiKeys.SHARE_FETCH.latestVersion();
    /** Far longer than the test: records that come back did so because a session closed. */
    private static final String LOCK_MS = "60000";

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private int correlationId;

    @Test
    void shouldServeAnUnknownMemberAndReleaseWhatItHeldWhenItsConnectionCloses() throws Exception {
        String group = "unknown-member-group";
        ShareClients clients = new ShareClients(PIER.bootstrapServers());
        clients.createTopic(TOPIC + "-1", 1);
        clients.setGroupConfig(group, "share.auto.offset.reset", "earliest");
        clients.setGroupConfig(group, "share.record.lock.duration.ms", LOCK_MS);
        clients.produce(TOPIC + "-1", 0, "r", 20);
        Uuid topicId = topicId(clients, TOPIC + "-1");

        List<Long> heldByStranger;
        try (RawKafkaClient stranger = RawKafkaClient.connect(PIER.bootstrapServers())) {
            ShareFetchResponseData answer = shareFetch(stranger, group, UNKNOWN_MEMBER, 0, topicId);
            assertThat(Errors.forCode(answer.errorCode())).isEqualTo(Errors.NONE);
            heldByStranger = acquiredOffsets(answer);
            assertThat(heldByStranger).as("records acquired by a member id the group never saw").isNotEmpty();
        }

        // A real member gets those very records, with a second delivery count, within the test's
        // time although their lock has a minute to run: the stranger's connection closed.
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(TOPIC + "-1"));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (got.size() < 20 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    got.add(r);
                    consumer.acknowledge(r);
                }
                consumer.commitSync(Duration.ofSeconds(5));
            }
            assertThat(got).extracting(ConsumerRecord::offset).containsAll(heldByStranger);
            assertThat(got).filteredOn(r -> heldByStranger.contains(r.offset()))
                    .allSatisfy(r -> assertThat(r.deliveryCount()).hasValue((short) 2));
        }
    }

    @Test
    void shouldLetAnotherConnectionGoOnWithASessionAsKafkaDoes() throws Exception {
        String group = "moved-session-group";
        ShareClients clients = new ShareClients(PIER.bootstrapServers());
        clients.createTopic(TOPIC + "-2", 1);
        clients.setGroupConfig(group, "share.auto.offset.reset", "earliest");
        clients.produce(TOPIC + "-2", 0, "r", 10);
        Uuid topicId = topicId(clients, TOPIC + "-2");
        String member = "moved-session-member-00000";

        try (RawKafkaClient first = RawKafkaClient.connect(PIER.bootstrapServers());
                RawKafkaClient second = RawKafkaClient.connect(PIER.bootstrapServers())) {
            assertThat(Errors.forCode(shareFetch(first, group, member, 0, topicId).errorCode())).isEqualTo(Errors.NONE);

            assertThat(Errors.forCode(shareFetch(second, group, member, 1, topicId).errorCode()))
                    .as("epoch 1 from another connection").isEqualTo(Errors.NONE);
            assertThat(Errors.forCode(shareFetch(first, group, member, 1, topicId).errorCode()))
                    .as("the same epoch again, from the first connection")
                    .isEqualTo(Errors.INVALID_SHARE_SESSION_EPOCH);
            assertThat(Errors.forCode(shareFetch(first, group, member, 2, topicId).errorCode()))
                    .as("the next epoch, from the first connection").isEqualTo(Errors.NONE);
        }
    }

    private static Uuid topicId(ShareClients clients, String topic) throws Exception {
        try (Admin admin = clients.admin()) {
            return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
        }
    }

    private ShareFetchResponseData shareFetch(RawKafkaClient client, String group, String member, int epoch,
            Uuid topicId) throws Exception {
        ShareFetchRequestData.FetchTopic topic = new ShareFetchRequestData.FetchTopic().setTopicId(topicId);
        if (epoch == 0) {
            topic.partitions().add(new ShareFetchRequestData.FetchPartition().setPartitionIndex(0));
        }
        ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(group).setMemberId(member)
                .setShareSessionEpoch(epoch).setMaxWaitMs(500).setMinBytes(1).setMaxBytes(1 << 20)
                .setMaxRecords(10).setBatchSize(10);
        if (epoch == 0) {
            data.topics().add(topic);
        }
        RequestHeader header = new RequestHeader(ApiKeys.SHARE_FETCH, VERSION, "raw", ++correlationId);
        client.send(header, new ShareFetchRequest.Builder(data).build(VERSION));
        return ((ShareFetchResponse) client.receiveResponse(header)).data();
    }

    private static List<Long> acquiredOffsets(ShareFetchResponseData answer) {
        List<Long> offsets = new ArrayList<>();
        for (ShareFetchResponseData.ShareFetchableTopicResponse t : answer.responses()) {
            for (ShareFetchResponseData.PartitionData p : t.partitions()) {
                assertThat(Errors.forCode(p.errorCode())).isEqualTo(Errors.NONE);
                for (ShareFetchResponseData.AcquiredRecords range : p.acquiredRecords()) {
                    for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                        offsets.add(o);
                    }
                }
            }
        }
        return offsets;
    }
}
