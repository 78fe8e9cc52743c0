package io.pier.it;

import static io.pier.it.ProtocolVersionMatrixIT.assertNoErrors;
import static io.pier.it.ProtocolVersionMatrixIT.name;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ProtocolVersionMatrixIT.Case;
import io.pier.it.ProtocolVersionMatrixIT.Connection;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.SyncGroupResponse;

/** The matrix cells of the classic group protocol and committed offsets: each uses its own group. */
final class GroupCases {
    private static final byte[] METADATA = {0, 3, 0, 0, 0, 0};
    private static final byte[] ASSIGNMENT = {0, 3, 0, 0, 0, 0, 0, 0, 0, 0};

    private GroupCases() {}

    /** A member of a group at a generation, as JoinGroup made it. */
    record Joined(String group, String memberId, int generation) {}

    static JoinGroupRequestData joinRequest(String group, String memberId, short v) {
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
                new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(METADATA));
        JoinGroupRequestData data = new JoinGroupRequestData().setGroupId(group).setMemberId(memberId)
                .setSessionTimeoutMs(10_000).setProtocolType("consumer").setProtocols(protocols);
        if (v >= 1) {
            data.setRebalanceTimeoutMs(10_000);
        }
        return data;
    }

    /** Joins {@code group} at JoinGroup {@code v} (twice from v4, KIP-394) and checks the answer. */
    static Joined join(Connection c, String group, short v) throws IOException {
        JoinGroupResponse r = c.call(ApiKeys.JOIN_GROUP, v, joinRequest(group, "", v));
        if (v >= 4) {
            assertThat(r.error()).isEqualTo(Errors.MEMBER_ID_REQUIRED);
            r = c.call(ApiKeys.JOIN_GROUP, v, joinRequest(group, r.data().memberId(), v));
        }
        assertNoErrors(r);
        assertThat(r.data().generationId()).isEqualTo(1);
        assertThat(r.data().leader()).isEqualTo(r.data().memberId());
        assertThat(r.data().protocolName()).isEqualTo("range");
        assertThat(r.data().members()).singleElement().satisfies(m -> assertThat(m.metadata()).isEqualTo(METADATA));
        return new Joined(group, r.data().memberId(), r.data().generationId());
    }

    /** Joins at v5 and syncs at {@code v}; returns the member. */
    static Joined joinAndSync(Connection c, String group, short v) throws IOException {
        Joined j = join(c, group, (short) 5);
        SyncGroupRequestData sync = new SyncGroupRequestData().setGroupId(group).setGenerationId(j.generation())
                .setMemberId(j.memberId()).setAssignments(new ArrayList<>(List.of(
                        new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(j.memberId())
                                .setAssignment(ASSIGNMENT))));
        if (v >= 5) {
            sync.setProtocolType("consumer").setProtocolName("range");
        }
        SyncGroupResponse r = c.call(ApiKeys.SYNC_GROUP, v, sync);
        assertNoErrors(r);
        assertThat(r.data().assignment()).isEqualTo(ASSIGNMENT);
        return j;
    }

    static void register(Map<ApiKeys, Case> cases) {
        String topic = ProtocolVersionMatrixIT.topic();
        cases.put(ApiKeys.JOIN_GROUP, (c, v) -> join(c, name("matrix-join-v", v), v));
        cases.put(ApiKeys.SYNC_GROUP, (c, v) -> joinAndSync(c, name("matrix-sync-v", v), v));
        cases.put(ApiKeys.HEARTBEAT, (c, v) -> {
            Joined j = joinAndSync(c, name("matrix-heartbeat-v", v), (short) 5);
            assertNoErrors(c.call(ApiKeys.HEARTBEAT, v, new HeartbeatRequestData().setGroupId(j.group())
                    .setMemberId(j.memberId()).setGenerationId(j.generation())));
        });
        cases.put(ApiKeys.LEAVE_GROUP, (c, v) -> {
            Joined j = joinAndSync(c, name("matrix-leave-v", v), (short) 5);
            LeaveGroupRequestData leave = new LeaveGroupRequestData().setGroupId(j.group());
            if (v < 3) {
                leave.setMemberId(j.memberId());
            } else {
                leave.setMembers(new ArrayList<>(List.of(new LeaveGroupRequestData.MemberIdentity()
                        .setMemberId(j.memberId()))));
            }
            assertNoErrors(c.call(ApiKeys.LEAVE_GROUP, v, leave));
        });
        cases.put(ApiKeys.DESCRIBE_GROUPS, (c, v) -> {
            Joined j = joinAndSync(c, name("matrix-classic-describe-v", v), (short) 5);
            DescribeGroupsResponse r = c.call(ApiKeys.DESCRIBE_GROUPS, v,
                    new DescribeGroupsRequestData().setGroups(new ArrayList<>(List.of(j.group()))));
            assertNoErrors(r);
            assertThat(r.data().groups()).singleElement().satisfies(g -> {
                assertThat(g.groupState()).isEqualTo("Stable");
                assertThat(g.protocolData()).isEqualTo("range");
                assertThat(g.members()).singleElement().satisfies(m -> {
                    assertThat(m.memberId()).isEqualTo(j.memberId());
                    assertThat(m.memberAssignment()).isEqualTo(ASSIGNMENT);
                });
            });
        });
        cases.put(ApiKeys.CONSUMER_GROUP_HEARTBEAT, (c, v) -> {
            // v0 lets the coordinator pick the member id; v1 clients bring their own (KIP-1082).
            ConsumerGroupHeartbeatResponse r = consumerJoin(c, name("matrix-consumer-hb-v", v), v);
            assertThat(r.data().memberId()).isNotEmpty();
            assertThat(r.data().memberEpoch()).isPositive();
            assertThat(r.data().assignment().topicPartitions()).singleElement().satisfies(t -> {
                assertThat(t.topicId()).isEqualTo(ProtocolVersionMatrixIT.topicId());
                assertThat(t.partitions()).containsExactly(0);
            });
        });
        cases.put(ApiKeys.CONSUMER_GROUP_DESCRIBE, (c, v) -> {
            String group = name("matrix-consumer-describe-v", v);
            ConsumerGroupHeartbeatResponse joined = consumerJoin(c, group, (short) 1);
            ConsumerGroupDescribeResponse r = c.call(ApiKeys.CONSUMER_GROUP_DESCRIBE, v,
                    new ConsumerGroupDescribeRequestData().setGroupIds(new ArrayList<>(List.of(group))));
            assertThat(r.data().groups()).singleElement().satisfies(g -> {
                assertThat(g.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(g.groupState()).isEqualTo("Stable");
                assertThat(g.assignorName()).isEqualTo("uniform");
                assertThat(g.members()).singleElement().satisfies(m -> {
                    assertThat(m.memberId()).isEqualTo(joined.data().memberId());
                    assertThat(m.subscribedTopicNames()).containsExactly(topic);
                    assertThat(m.assignment().topicPartitions()).singleElement()
                            .satisfies(t -> assertThat(t.topicName()).isEqualTo(topic));
                });
            });
        });
        cases.put(ApiKeys.OFFSET_COMMIT, (c, v) -> assertNoErrors(
                c.call(ApiKeys.OFFSET_COMMIT, v, commit(name("matrix-commit-v", v), topic, 10 + v))));
        cases.put(ApiKeys.OFFSET_FETCH, (c, v) -> {
            String group = name("matrix-fetch-v", v);
            assertNoErrors(c.call(ApiKeys.OFFSET_COMMIT, (short) 9, commit(group, topic, 20 + v)));
            OffsetFetchRequestData fetch = new OffsetFetchRequestData();
            if (v < 8) {
                fetch.setGroupId(group).setTopics(new ArrayList<>(List.of(new OffsetFetchRequestData
                        .OffsetFetchRequestTopic().setName(topic).setPartitionIndexes(new ArrayList<>(List.of(0))))));
            } else {
                fetch.setGroups(new ArrayList<>(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
                        .setGroupId(group).setTopics(new ArrayList<>(List.of(new OffsetFetchRequestData
                                .OffsetFetchRequestTopics().setName(topic)
                                .setPartitionIndexes(new ArrayList<>(List.of(0)))))))));
            }
            OffsetFetchResponse r = c.call(ApiKeys.OFFSET_FETCH, v, fetch);
            assertNoErrors(r);
            long offset = v < 8 ? r.data().topics().get(0).partitions().get(0).committedOffset()
                    : r.data().groups().get(0).topics().get(0).partitions().get(0).committedOffset();
            assertThat(offset).isEqualTo(20 + v);
        });
        cases.put(ApiKeys.OFFSET_DELETE, (c, v) -> {
            String group = name("matrix-offset-delete-v", v);
            assertNoErrors(c.call(ApiKeys.OFFSET_COMMIT, (short) 9, commit(group, topic, 30)));
            OffsetDeleteRequestData delete = new OffsetDeleteRequestData().setGroupId(group);
            OffsetDeleteRequestData.OffsetDeleteRequestTopic t =
                    new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(topic);
            t.partitions().add(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0));
            delete.topics().add(t);
            assertNoErrors(c.call(ApiKeys.OFFSET_DELETE, v, delete));
        });
    }

    /** A consumer-protocol member's first heartbeat, subscribed to the matrix topic. */
    static ConsumerGroupHeartbeatResponse consumerJoin(Connection c, String group, short v) throws IOException {
        ConsumerGroupHeartbeatResponse r = c.call(ApiKeys.CONSUMER_GROUP_HEARTBEAT, v,
                new ConsumerGroupHeartbeatRequestData().setGroupId(group)
                        .setMemberId(v == 0 ? "" : Uuid.randomUuid().toString()).setMemberEpoch(0)
                        .setRebalanceTimeoutMs(30_000)
                        .setSubscribedTopicNames(new ArrayList<>(List.of(ProtocolVersionMatrixIT.topic())))
                        .setTopicPartitions(new ArrayList<>()));
        assertNoErrors(r);
        return r;
    }

    /** A commit with generation -1 (no member), as an assign() user or Admin sends it. */
    static OffsetCommitRequestData commit(String group, String topic, long offset) {
        OffsetCommitRequestData data = new OffsetCommitRequestData().setGroupId(group);
        data.topics().add(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(topic)
                .setPartitions(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                        .setPartitionIndex(0).setCommittedOffset(offset).setCommittedMetadata("m")))));
        return data;
    }
}
