package io.pier.it;

import static io.pier.it.ProtocolVersionMatrixIT.assertNoErrors;
import static io.pier.it.ProtocolVersionMatrixIT.name;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ProtocolVersionMatrixIT.Case;
import io.pier.it.ProtocolVersionMatrixIT.Member;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;

/** The matrix cells of the share-group APIs (KIP-932): each joins its own group first. */
final class ShareCases {
    private ShareCases() {}

    static void register(Map<ApiKeys, Case> cases) {
        String topic = ProtocolVersionMatrixIT.topic();
        cases.put(ApiKeys.SHARE_GROUP_HEARTBEAT, (c, v) -> {
            ShareGroupHeartbeatResponse r = c.call(ApiKeys.SHARE_GROUP_HEARTBEAT, v,
                    MatrixRequests.joinShareGroup(name("matrix-hb-v", v), "member-" + v + "-0123456789abcdef", topic));
            assertNoErrors(r);
            assertThat(r.data().memberEpoch()).isPositive();
        });
        cases.put(ApiKeys.SHARE_FETCH, (c, v) -> {
            Member m = c.join(name("matrix-sf-v", v));
            ProtocolVersionMatrixIT.setGroupConfig(m.group(), "share.auto.offset.reset", "earliest");
            assertThat(c.openShareSession(m, v)).as("records acquired at ShareFetch v%s", v).isNotNull();
        });
        cases.put(ApiKeys.SHARE_ACKNOWLEDGE, (c, v) -> {
            Member m = c.join(name("matrix-sa-v", v));
            ProtocolVersionMatrixIT.setGroupConfig(m.group(), "share.auto.offset.reset", "earliest");
            long[] acquired = c.openShareSession(m, v);
            assertThat(acquired).isNotNull();
            assertNoErrors(c.call(ApiKeys.SHARE_ACKNOWLEDGE, v, MatrixRequests.shareAcknowledge(m.group(),
                    m.memberId(), 1, ProtocolVersionMatrixIT.topicId(), acquired[0], acquired[1])));
        });
        cases.put(ApiKeys.LIST_GROUPS, (c, v) -> {
            c.join(name("matrix-list-v", v));
            assertNoErrors(c.call(ApiKeys.LIST_GROUPS, v, MatrixRequests.listGroups()));
        });
        cases.put(ApiKeys.SHARE_GROUP_DESCRIBE, (c, v) -> {
            Member m = c.join(name("matrix-describe-v", v));
            ShareGroupDescribeResponse r = c.call(ApiKeys.SHARE_GROUP_DESCRIBE, v,
                    MatrixRequests.describeShareGroup(m.group()));
            assertNoErrors(r);
            assertThat(r.data().groups()).singleElement().satisfies(g -> assertThat(g.members())
                    .anySatisfy(member -> assertThat(member.memberId()).isEqualTo(m.memberId())));
        });
        cases.put(ApiKeys.DELETE_GROUPS, (c, v) -> {
            Member m = c.join(name("matrix-delete-group-v", v));
            c.leave(m);
            assertNoErrors(c.call(ApiKeys.DELETE_GROUPS, v, MatrixRequests.deleteGroups(m.group())));
        });
        cases.put(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, (c, v) -> {
            Member m = c.join(name("matrix-offsets-v", v));
            assertNoErrors(c.call(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, v,
                    MatrixRequests.describeShareGroupOffsets(m.group(), topic)));
        });
        cases.put(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, (c, v) -> {
            Member m = c.join(name("matrix-alter-v", v));
            c.leave(m);
            assertNoErrors(c.call(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, v,
                    MatrixRequests.alterShareGroupOffsets(m.group(), topic, 1)));
        });
        cases.put(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, (c, v) -> {
            Member m = c.join(name("matrix-delete-offsets-v", v));
            c.leave(m);
            assertNoErrors(c.call(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, (short) 0,
                    MatrixRequests.alterShareGroupOffsets(m.group(), topic, 1)));
            assertNoErrors(c.call(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, v,
                    MatrixRequests.deleteShareGroupOffsets(m.group(), topic)));
        });
    }
}
