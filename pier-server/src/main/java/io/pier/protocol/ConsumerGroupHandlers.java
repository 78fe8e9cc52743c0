package io.pier.protocol;

import io.pier.group.ClassicGroupDescription;
import io.pier.group.ClassicJoin;
import io.pier.group.ClassicJoinResult;
import io.pier.group.ClassicLeave;
import io.pier.group.ClassicProtocol;
import io.pier.group.ClassicSync;
import io.pier.service.ConsumerGroups;
import io.pier.service.Futures;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and DescribeGroups,
 * translated to {@link ConsumerGroups}. The broker never reads the assignment: the group's leader
 * computes it, so every client-side assignor works.
 */
public final class ConsumerGroupHandlers {
    /** JoinGroup v4+: a new dynamic member is first given its id (KIP-394). */
    private static final short FIRST_JOIN_VERSION_REQUIRING_MEMBER_ID = 4;
    /** JoinGroup v7+ carries the protocol type, and a null protocol name. */
    private static final short FIRST_JOIN_VERSION_WITH_PROTOCOL_TYPE = 7;
    private static final short FIRST_JOIN_VERSION_WITH_SKIP_ASSIGNMENT = 9;
    /** DescribeGroups v6+ answers GROUP_ID_NOT_FOUND where older versions describe a Dead group. */
    private static final short FIRST_DESCRIBE_VERSION_WITH_NOT_FOUND = 6;

    private final ConsumerGroups groups;

    private final Access access;

    public ConsumerGroupHandlers(ConsumerGroups groups, Access access) {
        this.groups = groups;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> joinGroup(ApiRequest request) {
        JoinGroupRequestData in = request.bodyAs(JoinGroupRequest.class).data();
        short version = request.version();
        List<ClassicProtocol> protocols = new ArrayList<>();
        for (JoinGroupRequestData.JoinGroupRequestProtocol p : in.protocols()) {
            protocols.add(new ClassicProtocol(p.name(), p.metadata()));
        }
        // Before v1 there is no rebalance timeout: the session timeout serves as one, as in Kafka.
        int rebalanceTimeoutMs = version == 0 ? in.sessionTimeoutMs() : in.rebalanceTimeoutMs();
        ClassicJoin join = new ClassicJoin(in.groupId(), in.memberId() == null ? "" : in.memberId(),
                in.groupInstanceId(), request.header().clientId(), clientHost(request), in.sessionTimeoutMs(),
                rebalanceTimeoutMs, in.protocolType(), protocols, version >= FIRST_JOIN_VERSION_REQUIRING_MEMBER_ID,
                version >= FIRST_JOIN_VERSION_WITH_SKIP_ASSIGNMENT);
        return groups.join(join).thenApply(r -> new JoinGroupResponse(joinResponse(r, version), version));
    }

    private static String clientHost(ApiRequest request) {
        InetSocketAddress remote = request.connection() == null ? null : request.connection().remoteAddress();
        return remote == null ? "" : "/" + remote.getAddress().getHostAddress();
    }

    private static JoinGroupResponseData joinResponse(ClassicJoinResult r, short version) {
        boolean withType = version >= FIRST_JOIN_VERSION_WITH_PROTOCOL_TYPE;
        JoinGroupResponseData out = new JoinGroupResponseData()
                .setErrorCode(r.error().code())
                .setGenerationId(r.generationId())
                .setProtocolName(r.protocolName() == null && !withType ? "" : r.protocolName())
                .setLeader(r.leaderId() == null ? "" : r.leaderId())
                .setMemberId(r.memberId() == null ? "" : r.memberId());
        if (withType) {
            out.setProtocolType(r.protocolType());
        }
        if (version >= FIRST_JOIN_VERSION_WITH_SKIP_ASSIGNMENT) {
            out.setSkipAssignment(r.skipAssignment());
        }
        for (ClassicJoinResult.Member m : r.members()) {
            out.members().add(new JoinGroupResponseData.JoinGroupResponseMember()
                    .setMemberId(m.memberId()).setGroupInstanceId(m.groupInstanceId()).setMetadata(m.metadata()));
        }
        return out;
    }

    public CompletableFuture<AbstractResponse> syncGroup(ApiRequest request) {
        SyncGroupRequestData in = request.bodyAs(SyncGroupRequest.class).data();
        Map<String, byte[]> assignments = new HashMap<>();
        for (SyncGroupRequestData.SyncGroupRequestAssignment a : in.assignments()) {
            assignments.put(a.memberId(), a.assignment());
        }
        ClassicSync sync = new ClassicSync(in.groupId(), in.generationId(), in.memberId(), in.groupInstanceId(),
                in.protocolType(), in.protocolName(), assignments);
        short version = request.version();
        return groups.sync(sync).thenApply(r -> {
            SyncGroupResponseData out = new SyncGroupResponseData().setErrorCode(r.error().code())
                    .setAssignment(r.assignment());
            if (version >= 5) {
                out.setProtocolType(r.protocolType()).setProtocolName(r.protocolName());
            }
            return new SyncGroupResponse(out);
        });
    }

    public CompletableFuture<AbstractResponse> heartbeat(ApiRequest request) {
        HeartbeatRequestData in = request.bodyAs(HeartbeatRequest.class).data();
        return groups.heartbeat(in.groupId(), in.memberId(), in.groupInstanceId(), in.generationId())
                .thenApply(e -> new HeartbeatResponse(new HeartbeatResponseData().setErrorCode(e.code())));
    }

    /** LeaveGroup: one member before v3, a batch (by member id or instance id) from v3. */
    public CompletableFuture<AbstractResponse> leaveGroup(ApiRequest request) {
        LeaveGroupRequestData in = request.bodyAs(LeaveGroupRequest.class).data();
        short version = request.version();
        List<ClassicLeave.Member> leaving = new ArrayList<>();
        if (version < 3) {
            leaving.add(new ClassicLeave.Member(in.memberId(), null));
        } else {
            for (LeaveGroupRequestData.MemberIdentity m : in.members()) {
                leaving.add(new ClassicLeave.Member(m.memberId() == null ? "" : m.memberId(), m.groupInstanceId()));
            }
        }
        return groups.leave(in.groupId(), leaving).thenApply(r -> {
            LeaveGroupResponseData out = new LeaveGroupResponseData().setErrorCode(r.error().code());
            for (ClassicLeave.MemberResult m : r.members()) {
                out.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(m.memberId())
                        .setGroupInstanceId(m.groupInstanceId()).setErrorCode(m.error().code()));
            }
            // Before v3 the one member's error becomes the top-level one.
            return new LeaveGroupResponse(out, version);
        });
    }

    public CompletableFuture<AbstractResponse> describeGroups(ApiRequest request) {
        DescribeGroupsRequestData in = request.bodyAs(DescribeGroupsRequest.class).data();
        short version = request.version();
        List<CompletableFuture<DescribeGroupsResponseData.DescribedGroup>> each = new ArrayList<>();
        for (String groupId : in.groups()) {
            if (!access.group(request, AclOperation.DESCRIBE, groupId)) {
                DescribeGroupsResponseData.DescribedGroup denied = new DescribeGroupsResponseData.DescribedGroup()
                        .setGroupId(groupId).setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                        .setGroupState("").setProtocolType("").setProtocolData("");
                each.add(CompletableFuture.completedFuture(version >= 3
                        ? denied.setAuthorizedOperations(Access.OPERATIONS_OMITTED) : denied));
                continue;
            }
            each.add(groups.describe(groupId).thenApply(d -> withOperations(request, in,
                    described(groupId, d, version))));
        }
        return Futures.all(each).thenApply(list -> {
            DescribeGroupsResponseData out = new DescribeGroupsResponseData();
            out.groups().addAll(list);
            return new DescribeGroupsResponse(out);
        });
    }

    /** As Kafka: a described group's operations, when v3+ asks for them and the group was found. */
    private DescribeGroupsResponseData.DescribedGroup withOperations(ApiRequest request, DescribeGroupsRequestData in,
            DescribeGroupsResponseData.DescribedGroup g) {
        if (request.version() >= 3 && in.includeAuthorizedOperations() && g.errorCode() == Errors.NONE.code()) {
            g.setAuthorizedOperations(access.operations(request, ResourceType.GROUP, g.groupId()));
        }
        return g;
    }

    private static DescribeGroupsResponseData.DescribedGroup described(String groupId, ConsumerGroups.Described d,
            short version) {
        DescribeGroupsResponseData.DescribedGroup g = new DescribeGroupsResponseData.DescribedGroup()
                .setGroupId(groupId).setProtocolType("").setProtocolData("");
        if (version >= 3) {
            g.setAuthorizedOperations(Access.OPERATIONS_OMITTED);
        }
        if (d.group().isEmpty()) {
            g.setGroupState("Dead");
            if (version >= FIRST_DESCRIBE_VERSION_WITH_NOT_FOUND) {
                g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(d.otherType()
                        ? "Group " + groupId + " is not a classic group." : "Group " + groupId + " not found.");
            }
            return g;
        }
        ClassicGroupDescription c = d.group().get();
        g.setGroupState(c.state().toString()).setProtocolType(c.protocolType()).setProtocolData(c.protocolName());
        for (ClassicGroupDescription.Member m : c.members()) {
            DescribeGroupsResponseData.DescribedGroupMember member = new DescribeGroupsResponseData.DescribedGroupMember()
                    .setMemberId(m.memberId()).setClientId(m.clientId()).setClientHost(m.clientHost())
                    .setMemberMetadata(m.metadata()).setMemberAssignment(m.assignment());
            if (version >= 4) {
                member.setGroupInstanceId(m.groupInstanceId());
            }
            g.members().add(member);
        }
        return g;
    }
}
