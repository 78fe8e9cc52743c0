package io.pier.protocol;

import io.pier.group.AssignedTopic;
import io.pier.group.ClassicGroupListing;
import io.pier.group.consumer.ConsumerGroupListing;
import io.pier.group.GroupDescription;
import io.pier.group.GroupListing;
import io.pier.group.MemberDescription;
import io.pier.service.ConsumerGroups;
import io.pier.service.Futures;
import io.pier.service.ShareGroups;
import io.pier.service.ShareOffsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult;
import org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResultCollection;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ShareGroupDescribeRequestData;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData.DescribedGroup;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The group-level admin APIs: ListGroups and DeleteGroups for share and classic consumer groups,
 * and ShareGroupDescribe. Group state lives with the coordinators' shards ({@link ShareGroups},
 * {@link ConsumerGroups}); deleting a share group also drops its share-partition state ({@link
 * ShareOffsets}), deleting a consumer group its committed offsets.
 */
public final class ShareGroupAdminHandlers {
    /** Group type and protocol type of a share group on the wire (ListGroups, KIP-932). */
    static final String SHARE = "share";
    /** Group type of a classic-protocol group on the wire (ListGroups v5). */
    static final String CLASSIC = "classic";
    /** Group type and protocol type of a consumer-protocol group on the wire (KIP-848). */
    static final String CONSUMER = "consumer";

    private final ShareGroups groups;
    private final ShareOffsets shares;
    private final ConsumerGroups consumerGroups;

    private final Access access;

    public ShareGroupAdminHandlers(ShareGroups groups, ShareOffsets shares, ConsumerGroups consumerGroups,
            Access access) {
        this.access = access;
        this.groups = groups;
        this.shares = shares;
        this.consumerGroups = consumerGroups;
    }

    /** ListGroups v0-5: states filter from v4, types filter from v5, both case-insensitive. */
    public CompletableFuture<AbstractResponse> listGroups(ApiRequest request) {
        ListGroupsRequestData in = request.bodyAs(ListGroupsRequest.class).data();
        short version = request.version();
        return groups.list().thenCombine(consumerGroups.list(), (listings, consumerListings) -> {
            ListGroupsResponseData out = new ListGroupsResponseData();
            if (matchesAny(CONSUMER, in.typesFilter())) {
                for (ConsumerGroupListing g : consumerListings.consumer()) {
                    if (!matchesAny(g.state().toString(), in.statesFilter())) {
                        continue;
                    }
                    ListGroupsResponseData.ListedGroup listed = new ListGroupsResponseData.ListedGroup()
                            .setGroupId(g.groupId()).setProtocolType(CONSUMER);
                    if (version >= 4) {
                        listed.setGroupState(g.state().toString());
                    }
                    if (version >= 5) {
                        listed.setGroupType(CONSUMER);
                    }
                    out.groups().add(listed);
                }
            }
            if (matchesAny(CLASSIC, in.typesFilter())) {
                for (ClassicGroupListing g : consumerListings.classic()) {
                    if (!matchesAny(g.state().toString(), in.statesFilter())) {
                        continue;
                    }
                    ListGroupsResponseData.ListedGroup listed = new ListGroupsResponseData.ListedGroup()
                            .setGroupId(g.groupId()).setProtocolType(g.protocolType());
                    if (version >= 4) {
                        listed.setGroupState(g.state().toString());
                    }
                    if (version >= 5) {
                        listed.setGroupType(CLASSIC);
                    }
                    out.groups().add(listed);
                }
            }
            if (!matchesAny(SHARE, in.typesFilter())) {
                return visible(request, out);
            }
            for (GroupListing g : listings) {
                if (!matchesAny(g.state().toString(), in.statesFilter())) {
                    continue;
                }
                ListGroupsResponseData.ListedGroup listed = new ListGroupsResponseData.ListedGroup()
                        .setGroupId(g.groupId())
                        .setProtocolType(SHARE);
                if (version >= 4) {
                    listed.setGroupState(g.state().toString());
                }
                if (version >= 5) {
                    listed.setGroupType(SHARE);
                }
                out.groups().add(listed);
            }
            return visible(request, out);
        });
    }

    /** ListGroups shows every group to DESCRIBE on the cluster, otherwise those the principal may DESCRIBE. */
    private ListGroupsResponse visible(ApiRequest request, ListGroupsResponseData out) {
        if (!access.cluster(request, AclOperation.DESCRIBE)) {
            out.groups().removeIf(g -> !access.group(request, AclOperation.DESCRIBE, g.groupId()));
        }
        return new ListGroupsResponse(out);
    }

    /** An empty or absent filter matches everything; the client sends "Share", Kafka answers "share". */
    private static boolean matchesAny(String value, List<String> filter) {
        if (filter == null || filter.isEmpty()) {
            return true;
        }
        String lower = value.toLowerCase(Locale.ROOT);
        return filter.stream().anyMatch(f -> f.toLowerCase(Locale.ROOT).equals(lower));
    }

    /** ShareGroupDescribe v1: GROUP_ID_NOT_FOUND for an id that is not a share group. */
    public CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        ShareGroupDescribeRequestData in = request.bodyAs(ShareGroupDescribeRequest.class).data();
        List<String> groupIds = in.groupIds();
        List<CompletableFuture<DescribedGroup>> described = new ArrayList<>();
        for (String groupId : groupIds) {
            if (!access.group(request, AclOperation.DESCRIBE, groupId)) {
                described.add(CompletableFuture.completedFuture(new DescribedGroup().setGroupId(groupId)
                        .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                        .setAuthorizedOperations(Access.OPERATIONS_OMITTED)));
                continue;
            }
            described.add(groups.describe(groupId).thenApply(d -> authorized(request, in, toWire(groupId, d))));
        }
        return Futures.all(described).thenApply(list -> {
            ShareGroupDescribeResponseData out = new ShareGroupDescribeResponseData();
            out.groups().addAll(list);
            return new ShareGroupDescribeResponse(out);
        });
    }

    /**
     * As Kafka: a described group naming a topic (subscribed or assigned) the principal may not
     * DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED, without its members; a described group
     * carries its operations when asked.
     */
    private DescribedGroup authorized(ApiRequest request, ShareGroupDescribeRequestData in, DescribedGroup group) {
        if (group.errorCode() != Errors.NONE.code()) {
            return group;
        }
        for (ShareGroupDescribeResponseData.Member m : group.members()) {
            Stream<String> topics = Stream.concat(m.subscribedTopicNames().stream(),
                    m.assignment().topicPartitions().stream().map(ShareGroupDescribeResponseData.TopicPartitions::topicName));
            if (!access.mayDescribeAll(request, topics)) {
                group.members().clear();
                return group.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("The group has member(s) that use topics the client may not describe");
            }
        }
        if (in.includeAuthorizedOperations()) {
            group.setAuthorizedOperations(access.operations(request, ResourceType.GROUP, group.groupId()));
        }
        return group;
    }

    private static DescribedGroup toWire(String groupId, Optional<GroupDescription> found) {
        DescribedGroup group = new DescribedGroup().setGroupId(groupId)
                .setAuthorizedOperations(Access.OPERATIONS_OMITTED);
        if (found.isEmpty()) {
            return group.setErrorCode(Errors.GROUP_ID_NOT_FOUND.code())
                    .setErrorMessage("Group " + groupId + " not found.");
        }
        GroupDescription d = found.get();
        group.setGroupState(d.state().toString())
                .setGroupEpoch(d.groupEpoch())
                .setAssignmentEpoch(d.assignmentEpoch())
                .setAssignorName(d.assignorName());
        for (MemberDescription m : d.members()) {
            List<ShareGroupDescribeResponseData.TopicPartitions> assigned = new ArrayList<>();
            for (AssignedTopic t : m.assignment()) {
                assigned.add(new ShareGroupDescribeResponseData.TopicPartitions()
                        .setTopicId(t.topicId())
                        .setTopicName(t.topicName())
                        .setPartitions(new ArrayList<>(t.partitions())));
            }
            group.members().add(new ShareGroupDescribeResponseData.Member()
                    .setMemberId(m.memberId())
                    .setRackId(m.rackId())
                    .setMemberEpoch(m.memberEpoch())
                    .setClientId(m.clientId())
                    .setClientHost(m.clientHost())
                    .setSubscribedTopicNames(new ArrayList<>(m.subscribedTopicNames()))
                    .setAssignment(new ShareGroupDescribeResponseData.Assignment().setTopicPartitions(assigned)));
        }
        return group;
    }

    /**
     * DeleteGroups v0-3: NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for no group; a
     * deleted share group's share-partition state, or consumer group's offsets, go with it.
     */
    public CompletableFuture<AbstractResponse> deleteGroups(ApiRequest request) {
        List<String> groupIds = request.bodyAs(DeleteGroupsRequest.class).data().groupsNames();
        short version = request.version();
        List<CompletableFuture<DeletableGroupResult>> results = new ArrayList<>();
        for (String groupId : groupIds) {
            if (!access.group(request, AclOperation.DELETE, groupId)) {
                results.add(CompletableFuture.completedFuture(new DeletableGroupResult().setGroupId(groupId)
                        .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
                continue;
            }
            results.add(consumerGroups.delete(groupId)
                    .thenCompose(classic -> classic != Errors.GROUP_ID_NOT_FOUND
                            ? CompletableFuture.completedFuture(classic)
                            : groups.delete(groupId).thenCompose(error -> error == Errors.NONE
                                    ? shares.deleteGroupState(groupId).thenApply(v -> error)
                                    : CompletableFuture.completedFuture(error)))
                    .thenApply(error -> {
                        DeletableGroupResult r = new DeletableGroupResult().setGroupId(groupId)
                                .setErrorCode(error.code());
                        if (version >= 3 && error != Errors.NONE) {
                            r.setErrorMessage(error.message());
                        }
                        return r;
                    }));
        }
        return Futures.all(results).thenApply(list -> {
            DeletableGroupResultCollection collection = new DeletableGroupResultCollection();
            list.forEach(collection::add);
            return new DeleteGroupsResponse(new DeleteGroupsResponseData().setResults(collection));
        });
    }
}
