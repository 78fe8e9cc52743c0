package io.pier.protocol;

import io.pier.group.AssignedTopic;
import io.pier.group.PartitionKey;
import io.pier.group.consumer.ConsumerGroupDescription;
import io.pier.group.consumer.ConsumerHeartbeat;
import io.pier.service.ConsumerGroups;
import io.pier.service.Futures;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.resource.ResourceType;

/** The consumer group protocol of KIP-848: ConsumerGroupHeartbeat v0-1 and ConsumerGroupDescribe v0-1. */
public final class ConsumerProtocolHandlers {
    /** ConsumerGroupDescribe v1's MemberType of a consumer-protocol and of a classic member (KIP-1099). */
    private static final byte CONSUMER_MEMBER = 1;
    private static final byte CLASSIC_MEMBER = 0;

    private final ConsumerGroups groups;
    private final Access access;

    public ConsumerProtocolHandlers(ConsumerGroups groups, Access access) {
        this.groups = groups;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> heartbeat(ApiRequest request) {
        ConsumerGroupHeartbeatRequestData in = request.bodyAs(ConsumerGroupHeartbeatRequest.class).data();
        Set<PartitionKey> owned = null;
        if (in.topicPartitions() != null) {
            owned = new HashSet<>();
            for (ConsumerGroupHeartbeatRequestData.TopicPartitions t : in.topicPartitions()) {
                for (int p : t.partitions()) {
                    owned.add(new PartitionKey(t.topicId(), p));
                }
            }
        }
        ConsumerHeartbeat hb = new ConsumerHeartbeat(in.groupId(), in.memberId() == null ? "" : in.memberId(),
                in.memberEpoch(), in.instanceId(), in.rackId(), in.rebalanceTimeoutMs(), in.subscribedTopicNames(),
                in.subscribedTopicRegex(), in.serverAssignor(), owned, request.header().clientId(),
                request.connection().remoteAddress().getAddress().toString());
        return groups.consumerHeartbeat(hb).thenApply(r -> {
            ConsumerGroupHeartbeatResponseData out = new ConsumerGroupHeartbeatResponseData()
                    .setErrorCode(r.error().code())
                    .setErrorMessage(r.errorMessage())
                    .setMemberId(r.memberId())
                    .setMemberEpoch(r.memberEpoch())
                    .setHeartbeatIntervalMs(r.heartbeatIntervalMs());
            if (r.assignment() != null) {
                List<ConsumerGroupHeartbeatResponseData.TopicPartitions> tps = new ArrayList<>();
                r.assignment().forEach((topicId, partitions) -> tps.add(
                        new ConsumerGroupHeartbeatResponseData.TopicPartitions()
                                .setTopicId(topicId).setPartitions(new ArrayList<>(partitions))));
                out.setAssignment(new ConsumerGroupHeartbeatResponseData.Assignment().setTopicPartitions(tps));
            }
            return new ConsumerGroupHeartbeatResponse(out);
        });
    }

    /** GROUP_ID_NOT_FOUND for an id that is no consumer-protocol group (the admin client then asks DescribeGroups). */
    public CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        ConsumerGroupDescribeRequestData in = request.bodyAs(ConsumerGroupDescribeRequest.class).data();
        List<CompletableFuture<ConsumerGroupDescribeResponseData.DescribedGroup>> each = new ArrayList<>();
        for (String groupId : in.groupIds()) {
            if (!access.group(request, AclOperation.DESCRIBE, groupId)) {
                each.add(CompletableFuture.completedFuture(new ConsumerGroupDescribeResponseData.DescribedGroup()
                        .setGroupId(groupId).setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                        .setAuthorizedOperations(Access.OPERATIONS_OMITTED)));
                continue;
            }
            each.add(groups.consumerDescribe(groupId)
                    .thenApply(d -> authorized(request, in, toWire(groupId, d))));
        }
        return Futures.all(each).thenApply(list -> {
            ConsumerGroupDescribeResponseData out = new ConsumerGroupDescribeResponseData();
            out.groups().addAll(list);
            return new ConsumerGroupDescribeResponse(out);
        });
    }

    /**
     * As Kafka: a group naming a topic (subscribed or assigned) the principal may not DESCRIBE is
     * answered TOPIC_AUTHORIZATION_FAILED without its members; a described group carries its
     * operations when asked.
     */
    private ConsumerGroupDescribeResponseData.DescribedGroup authorized(ApiRequest request,
            ConsumerGroupDescribeRequestData in, ConsumerGroupDescribeResponseData.DescribedGroup g) {
        if (g.errorCode() != Errors.NONE.code()) {
            return g;
        }
        for (ConsumerGroupDescribeResponseData.Member m : g.members()) {
            Stream<String> topics = Stream.concat(m.subscribedTopicNames().stream(), Stream.concat(
                    m.assignment().topicPartitions().stream(), m.targetAssignment().topicPartitions().stream())
                    .map(ConsumerGroupDescribeResponseData.TopicPartitions::topicName));
            if (!access.mayDescribeAll(request, topics)) {
                g.members().clear();
                return g.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("The group has member(s) that use topics the client may not describe");
            }
        }
        if (in.includeAuthorizedOperations()) {
            g.setAuthorizedOperations(access.operations(request, ResourceType.GROUP, g.groupId()));
        }
        return g;
    }

    private static ConsumerGroupDescribeResponseData.DescribedGroup toWire(String groupId,
            ConsumerGroups.ConsumerDescribed d) {
        ConsumerGroupDescribeResponseData.DescribedGroup g = new ConsumerGroupDescribeResponseData.DescribedGroup()
                .setGroupId(groupId).setAuthorizedOperations(Access.OPERATIONS_OMITTED);
        if (groupId == null || groupId.isEmpty()) {
            return g.setErrorCode(Errors.INVALID_GROUP_ID.code()).setErrorMessage("The group id must not be empty.");
        }
        if (d.group().isEmpty()) {
            return g.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code()).setErrorMessage(d.otherType()
                    ? "Group " + groupId + " is not a consumer group." : "Group " + groupId + " not found.");
        }
        ConsumerGroupDescription c = d.group().get();
        g.setGroupState(c.state().toString()).setGroupEpoch(c.groupEpoch()).setAssignmentEpoch(c.assignmentEpoch())
                .setAssignorName(c.assignorName());
        for (ConsumerGroupDescription.Member m : c.members()) {
            g.members().add(new ConsumerGroupDescribeResponseData.Member()
                    .setMemberId(m.memberId())
                    .setInstanceId(m.instanceId())
                    .setRackId(m.rackId())
                    .setMemberEpoch(m.memberEpoch())
                    .setClientId(m.clientId())
                    .setClientHost(m.clientHost())
                    .setSubscribedTopicNames(new ArrayList<>(m.subscribedTopicNames()))
                    .setSubscribedTopicRegex(m.subscribedTopicRegex())
                    .setAssignment(assignment(m.assignment()))
                    .setTargetAssignment(assignment(m.targetAssignment()))
                    .setMemberType(m.classic() ? CLASSIC_MEMBER : CONSUMER_MEMBER));
        }
        return g;
    }

    private static ConsumerGroupDescribeResponseData.Assignment assignment(List<AssignedTopic> topics) {
        ConsumerGroupDescribeResponseData.Assignment a = new ConsumerGroupDescribeResponseData.Assignment();
        for (AssignedTopic t : topics) {
            a.topicPartitions().add(new ConsumerGroupDescribeResponseData.TopicPartitions()
                    .setTopicId(t.topicId()).setTopicName(t.topicName()).setPartitions(new ArrayList<>(t.partitions())));
        }
        return a;
    }
}
