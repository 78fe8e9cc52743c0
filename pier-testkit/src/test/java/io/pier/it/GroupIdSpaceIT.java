package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.InconsistentGroupProtocolException;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Share groups and consumer groups share one id space: an id in use by one kind refuses the other
 * with Kafka's codes; ListGroups shows both kinds, filtered by type and state; DeleteGroups and
 * commits from unknown members or stale generations are refused with the group left as it was.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GroupIdSpaceIT {
    private static final String TOPIC = "id-space";

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0",
            "num.partitions", "2");

    private static Properties consumerProps(String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("group.id", group);
        p.put("group.protocol", "classic");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        return p;
    }

    @Test
    void shouldKeepShareAndConsumerGroupIdsApartAndListBoth() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get();
            // Given a share group "jobs" with a live member, and a consumer group "readers" with one
            Properties share = new Properties();
            share.put("bootstrap.servers", PIER.bootstrapServers());
            share.put("group.id", "jobs");
            try (KafkaShareConsumer<String, String> sharer =
                            new KafkaShareConsumer<>(share, new StringDeserializer(), new StringDeserializer());
                    KafkaConsumer<String, String> reader =
                            new KafkaConsumer<>(consumerProps("readers"), new StringDeserializer(),
                                    new StringDeserializer())) {
                sharer.subscribe(List.of(TOPIC));
                reader.subscribe(List.of(TOPIC));
                await("both groups").atMost(Duration.ofSeconds(30)).until(() -> {
                    sharer.poll(Duration.ofMillis(100));
                    reader.poll(Duration.ofMillis(100));
                    return !reader.assignment().isEmpty() && admin.listGroups().all().get().size() >= 2;
                });

                // When a consumer uses the share group's id
                try (KafkaConsumer<String, String> intruder = new KafkaConsumer<>(consumerProps("jobs"),
                        new StringDeserializer(), new StringDeserializer())) {
                    intruder.subscribe(List.of(TOPIC));
                    // Then JoinGroup is refused with INCONSISTENT_GROUP_PROTOCOL
                    assertThatThrownBy(() -> {
                        for (int i = 0; i < 100; i++) {
                            intruder.poll(Duration.ofMillis(100));
                        }
                    }).isInstanceOf(InconsistentGroupProtocolException.class);
                }
                // And a commit or fetch of its offsets with GROUP_ID_NOT_FOUND
                assertThatThrownBy(() -> admin.alterConsumerGroupOffsets("jobs",
                        Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(1))).all().get())
                        .hasCauseInstanceOf(GroupIdNotFoundException.class);

                // And ListGroups has both kinds, filtered by type and state
                assertThat(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get())
                        .extracting(GroupListing::groupId).contains("readers").doesNotContain("jobs");
                assertThat(admin.listGroups(ListGroupsOptions.forShareGroups()).all().get())
                        .extracting(GroupListing::groupId).contains("jobs").doesNotContain("readers");
                assertThat(admin.listGroups(new ListGroupsOptions().withTypes(Set.of(GroupType.CLASSIC))
                        .inGroupStates(Set.of(GroupState.STABLE))).all().get())
                        .extracting(GroupListing::groupId).containsExactly("readers");
                ConsumerGroupDescription described =
                        admin.describeConsumerGroups(List.of("readers")).all().get().get("readers");
                assertThat(described.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(described.members()).singleElement().satisfies(m ->
                        assertThat(m.assignment().topicPartitions()).hasSize(2));

                // And a consumer group with a member cannot be deleted
                assertThatThrownBy(() -> admin.deleteConsumerGroups(List.of("readers")).all().get())
                        .hasCauseInstanceOf(GroupNotEmptyException.class);
                reader.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(0, "kept")));
            }

            // Then once empty it is deleted, and its offsets with it
            admin.deleteConsumerGroups(List.of("readers")).all().get();
            assertThat(admin.listConsumerGroupOffsets("readers").partitionsToOffsetAndMetadata().get()).isEmpty();
            assertThat(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get())
                    .extracting(GroupListing::groupId).doesNotContain("readers");
        }
    }

    @Test
    void shouldRefuseAConsumerProtocolMemberOnTheIdOfAShareGroupOrOfANonConsumerClassicGroup() throws Exception {
        String topic = TOPIC + "-848";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
                RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers(), Duration.ofSeconds(20))) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            // Given a share group with a member, and a classic group of another protocol type (as
            // Kafka Connect's workers form), which no consumer-protocol member may take over
            Properties share = new Properties();
            share.put("bootstrap.servers", PIER.bootstrapServers());
            share.put("group.id", "jobs-848");
            assertThat(connectJoin(raw, "workers-848")).isEqualTo(Errors.NONE);
            try (KafkaShareConsumer<String, String> sharer =
                    new KafkaShareConsumer<>(share, new StringDeserializer(), new StringDeserializer())) {
                sharer.subscribe(List.of(topic));
                await("the share group").atMost(Duration.ofSeconds(30)).until(() -> {
                    sharer.poll(Duration.ofMillis(100));
                    return admin.listGroups(ListGroupsOptions.forShareGroups()).all().get().stream()
                            .anyMatch(g -> g.groupId().equals("jobs-848"));
                });
                for (String taken : List.of("jobs-848", "workers-848")) {
                    Properties p = consumerProps(taken);
                    p.put("group.protocol", "consumer");
                    try (KafkaConsumer<String, String> intruder =
                            new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                        intruder.subscribe(List.of(topic));
                        // Then its heartbeat is refused with GROUP_ID_NOT_FOUND, as Kafka does
                        assertThatThrownBy(() -> {
                            for (int i = 0; i < 100; i++) {
                                intruder.poll(Duration.ofMillis(100));
                            }
                        }).as(taken).isInstanceOf(GroupIdNotFoundException.class);
                    }
                }
                // And both groups are still what they were
                Map<String, GroupListing> groups = new java.util.HashMap<>();
                admin.listGroups().all().get().forEach(g -> groups.put(g.groupId(), g));
                assertThat(groups.get("jobs-848").type()).contains(GroupType.SHARE);
                assertThat(groups.get("workers-848").type()).contains(GroupType.CLASSIC);
                assertThat(groups.get("workers-848").protocol()).isEqualTo("connect");
            }
        }
    }

    /** A JoinGroup of protocol type "connect" (KIP-394: first for a member id, then with it). */
    private static Errors connectJoin(RawKafkaClient raw, String group) throws Exception {
        JoinGroupRequestData body = new JoinGroupRequestData().setGroupId(group).setMemberId("")
                .setSessionTimeoutMs(30_000).setRebalanceTimeoutMs(30_000).setProtocolType("connect");
        body.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("sessioned")
                .setMetadata(new byte[] {1, 2, 3}));
        Errors error = null;
        for (int attempt = 1; attempt <= 2; attempt++) {
            RequestHeader header = new RequestHeader(ApiKeys.JOIN_GROUP, (short) 9, "raw", 100 + attempt);
            raw.sendFrame(RawKafkaClient.serialize(header, body, (short) 9));
            JoinGroupResponse r = (JoinGroupResponse) raw.receiveResponse(header);
            error = Errors.forCode(r.data().errorCode());
            body.setMemberId(r.data().memberId());
            if (error != Errors.MEMBER_ID_REQUIRED) {
                break;
            }
        }
        return error;
    }

    @Test
    void shouldRefuseCommitsFromUnknownMembersAndStaleGenerationsLeavingTheGroupStable() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
                KafkaConsumer<String, String> member = new KafkaConsumer<>(consumerProps("guarded"),
                        new StringDeserializer(), new StringDeserializer())) {
            admin.createTopics(List.of(new NewTopic("guarded-topic", 1, (short) 1))).all().get();
            // Given a stable group of one member at some generation
            member.subscribe(List.of("guarded-topic"));
            await("assigned").atMost(Duration.ofSeconds(30)).until(() -> {
                member.poll(Duration.ofMillis(100));
                return !member.assignment().isEmpty();
            });
            int generation = member.groupMetadata().generationId();
            String memberId = member.groupMetadata().memberId();

            // When commits come from an unknown member, a stale generation, and no member at all
            try (RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers())) {
                assertThat(commit(raw, "nobody", generation, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
                assertThat(commit(raw, memberId, generation - 1, 2)).isEqualTo(Errors.ILLEGAL_GENERATION);
                assertThat(commit(raw, "", -1, 3)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
            }

            // Then nothing was committed and the group is as it was
            assertThat(admin.listConsumerGroupOffsets("guarded").partitionsToOffsetAndMetadata().get()).isEmpty();
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("guarded")).all().get().get("guarded");
            assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(d.members()).singleElement().satisfies(m -> assertThat(m.consumerId()).isEqualTo(memberId));
            member.poll(Duration.ofMillis(100));
            assertThat(member.groupMetadata().generationId()).isEqualTo(generation);
            member.commitSync(Map.of(new TopicPartition("guarded-topic", 0), new OffsetAndMetadata(0)));
        }
    }

    @Test
    void shouldRefuseShareGroupOffsetChangesOnAConsumerGroupsIdAndCreateNoShareGroup() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("offsets-space", 1, (short) 1))).all().get();
            // Given an Empty consumer group with a committed offset
            admin.alterConsumerGroupOffsets("ledger", Map.of(new TopicPartition("offsets-space", 0),
                    new OffsetAndMetadata(3))).all().get();

            // When share-group offsets are altered and deleted under its id
            TopicPartition tp = new TopicPartition("offsets-space", 0);
            assertThatThrownBy(() -> admin.alterShareGroupOffsets("ledger", Map.of(tp, 0L)).all().get())
                    .hasCauseInstanceOf(GroupIdNotFoundException.class);
            assertThatThrownBy(() -> admin.deleteShareGroupOffsets("ledger", Set.of("offsets-space")).all().get())
                    .hasCauseInstanceOf(GroupIdNotFoundException.class);

            // Then no share group was created, and the consumer group and its offset are as they were
            assertThat(admin.listGroups(ListGroupsOptions.forShareGroups()).all().get())
                    .extracting(GroupListing::groupId).doesNotContain("ledger");
            assertThat(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get())
                    .extracting(GroupListing::groupId).contains("ledger");
            assertThat(admin.listConsumerGroupOffsets("ledger").partitionsToOffsetAndMetadata().get().get(tp).offset())
                    .isEqualTo(3);
        }
    }

    @Test
    void shouldRefuseOversizedJoinGroupMetadataWithUnknownServerErrorLeavingTheGroupStable() throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
                KafkaConsumer<String, String> member = new KafkaConsumer<>(consumerProps("roomy"),
                        new StringDeserializer(), new StringDeserializer())) {
            admin.createTopics(List.of(new NewTopic("roomy-topic", 1, (short) 1))).all().get();
            // Given a stable group of one member
            member.subscribe(List.of("roomy-topic"));
            await("assigned").atMost(Duration.ofSeconds(30)).until(() -> {
                member.poll(Duration.ofMillis(100));
                return !member.assignment().isEmpty();
            });
            int generation = member.groupMetadata().generationId();

            // When a member joins it, and a new group, with a subscription larger than message.max.bytes
            try (RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers(), Duration.ofSeconds(20))) {
                assertThat(oversizedJoin(raw, "roomy", 1)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
                assertThat(oversizedJoin(raw, "roomy-new", 2)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
            }

            // Then the group is as it was, and the new one was never created
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("roomy")).all().get().get("roomy");
            assertThat(d.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(d.members()).hasSize(1);
            member.poll(Duration.ofMillis(100));
            assertThat(member.groupMetadata().generationId()).isEqualTo(generation);
            assertThat(admin.listGroups().all().get()).extracting(GroupListing::groupId).doesNotContain("roomy-new");
        }
    }

    private static Errors oversizedJoin(RawKafkaClient raw, String group, int correlationId) throws Exception {
        JoinGroupRequestData body = new JoinGroupRequestData().setGroupId(group).setMemberId("")
                .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer");
        body.protocols().add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                .setMetadata(new byte[1_100_000]));
        RequestHeader header = new RequestHeader(ApiKeys.JOIN_GROUP, (short) 9, "raw", correlationId);
        raw.sendFrame(RawKafkaClient.serialize(header, body, (short) 9));
        JoinGroupResponse r = (JoinGroupResponse) raw.receiveResponse(header);
        return Errors.forCode(r.data().errorCode());
    }

    private static Errors commit(RawKafkaClient raw, String memberId, int generation, int correlationId)
            throws Exception {
        OffsetCommitRequestData body = new OffsetCommitRequestData().setGroupId("guarded").setMemberId(memberId)
                .setGenerationIdOrMemberEpoch(generation);
        body.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("guarded-topic")
                .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                        .setPartitionIndex(0).setCommittedOffset(5))));
        RequestHeader header = new RequestHeader(ApiKeys.OFFSET_COMMIT, (short) 9, "raw", correlationId);
        raw.sendFrame(RawKafkaClient.serialize(header, body, (short) 9));
        OffsetCommitResponse r = (OffsetCommitResponse) raw.receiveResponse(header);
        return Errors.forCode(r.data().topics().get(0).partitions().get(0).errorCode());
    }
}
