package io.pier.gateway;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import io.pier.txn.TransactionConfig;

import io.pier.protocol.Access;
import io.pier.protocol.ApiHandler;
import io.pier.protocol.ApiRequest;
import io.pier.protocol.ApiRouter;
import io.pier.protocol.ApiVersionsHandler;
import io.pier.protocol.BrokerFeatures;
import io.pier.protocol.CoordinatorHandlers;
import io.pier.service.BrokerServices;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import io.pier.service.NodeInfo;

/**
 * The Kafka APIs a gateway forwards to its upstream, each registered at the versions both the
 * upstream and kafka-clients (which parses them here) serve, so a client always picks a version
 * the upstream takes as it is. An API the upstream lacks is not advertised at all: the client
 * then behaves as against the upstream itself.
 */
public final class GatewayApis {
    /** AddPartitionsToTxn v4+ is the brokers' batched form (KIP-890); clients send v3 at most. */
    private static final short ADD_PARTITIONS_TO_TXN_CLIENT_MAX = 3;
    /**
     * Extra time a request that waits upstream on purpose (a JoinGroup its rebalance timeout, a
     * Produce its acks timeout) may take before the gateway gives up on it, as the Java client allows.
     */
    private static final int UPSTREAM_GRACE_MS = 5_000;
    /**
     * How long a node that has just started holds Metadata and DescribeCluster for its first split
     * (a rebalance of the gateway group: a few heartbeats), before answering with itself alone.
     */
    private static final long FIRST_SPLIT_WAIT_MS = 10_000;

    private final ApiRouter router;
    private final Upstream upstream;
    private final Forwarding forwarding;
    private final PartitionForwarding partitions;
    private final KeyedForwarding keyed;
    private final GatewayAccess access;

    private GatewayApis(ApiRouter router, Upstream upstream, GatewayNodes nodes, GatewayAccess access) {
        this.router = router;
        this.upstream = upstream;
        this.forwarding = new Forwarding(upstream, nodes);
        this.partitions = new PartitionForwarding(upstream);
        this.keyed = new KeyedForwarding(upstream);
        this.access = access;
    }

    /** What a gateway answers itself, of what a broker registers: the rest is forwarded. */
    private static final Set<ApiKeys> ANSWERED_HERE = EnumSet.of(ApiKeys.API_VERSIONS, ApiKeys.FIND_COORDINATOR,
            ApiKeys.DESCRIBE_CLUSTER, ApiKeys.SASL_HANDSHAKE, ApiKeys.SASL_AUTHENTICATE,
            ApiKeys.SHARE_GROUP_HEARTBEAT, ApiKeys.SHARE_FETCH, ApiKeys.SHARE_ACKNOWLEDGE, ApiKeys.SHARE_GROUP_DESCRIBE,
            ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKeys.ALTER_SHARE_GROUP_OFFSETS, ApiKeys.DELETE_SHARE_GROUP_OFFSETS);
    /**
     * With ACLs on (the gateway's own, every node's: {@link UpstreamAcls}), the ACL APIs are
     * answered here too; without, they go to the upstream, whose ACLs they then manage.
     */
    private static final Set<ApiKeys> ACL_APIS = EnumSet.of(ApiKeys.CREATE_ACLS, ApiKeys.DESCRIBE_ACLS,
            ApiKeys.DELETE_ACLS);

    /**
     * Turns a broker's APIs ({@code router}, as {@code Apis.register} filled it) into a single
     * gateway node's. Share groups stay with the broker's own engine, which reads mirrors of the
     * upstream partitions ({@link Mirrors}) instead of its own logs; everything else is forwarded.
     * The gateway also answers ApiVersions (the versions both sides serve, the upstream's
     * transaction version, so clients follow the upstream's transaction protocol), FindCoordinator
     * (this node for every group and transactional id: it forwards to the real coordinator) and
     * DescribeCluster (this node, in the upstream's cluster). ListGroups, DeleteGroups and the
     * GROUP resources of DescribeConfigs and IncrementalAlterConfigs are answered in both places.
     * With several gateway nodes, {@link ShareRouting} sends each share request to the node that
     * serves its state, and the nodes ask each other with {@code peers} for the share-group
     * offsets Admin asks a coordinator about; returns the view of the nodes that
     * {@link GatewayMembership} keeps. With {@code access} enabled (the broker's handlers
     * registered with the same ACLs), every forwarded request is checked first ({@link GatewayAccess}).
     */
    public static GatewayCluster register(ApiRouter router, Upstream upstream, UpstreamClient peers,
            Supplier<NodeInfo> node, long startWallMs, BrokerServices services, GatewayState state,
            GroupConfigSync settings, Access access) {
        ApiHandler localListGroups = router.handler(ApiKeys.LIST_GROUPS);
        ApiHandler localDeleteGroups = router.handler(ApiKeys.DELETE_GROUPS);
        ApiHandler localDescribeConfigs = router.handler(ApiKeys.DESCRIBE_CONFIGS);
        ApiHandler localAlterConfigs = router.handler(ApiKeys.INCREMENTAL_ALTER_CONFIGS);
        Map<ApiKeys, ApiHandler> share = new EnumMap<>(ApiKeys.class);
        for (ApiKeys api : ANSWERED_HERE) {
            share.put(api, router.handler(api));
        }
        Set<ApiKeys> answeredHere = EnumSet.copyOf(ANSWERED_HERE);
        if (access.enabled()) {
            answeredHere.addAll(ACL_APIS);
        }
        router.retainOnly(answeredHere);

        GatewayTopics topics = new GatewayTopics(upstream, services.topics());
        GatewayCluster cluster = new GatewayCluster(node, state.partitions(), topics);
        ShareRouting routing = new ShareRouting(cluster, state, access);
        short transactionVersion = upstream.versions().finalizedFeatures()
                .getOrDefault(TransactionConfig.TRANSACTION_VERSION, (short) 0);
        router.register(ApiKeys.API_VERSIONS, 0, 5,
                        new ApiVersionsHandler(router, BrokerFeatures.of(transactionVersion, startWallMs)))
                .register(ApiKeys.FIND_COORDINATOR, 0, 6, routing::findCoordinator)
                .register(ApiKeys.DESCRIBE_CLUSTER, 0, 2, r -> cluster.afterFirstSplit(FIRST_SPLIT_WAIT_MS)
                        .thenCompose(v -> routing.describeCluster(r, upstream.clusterId())));
        GatewayApis apis = new GatewayApis(router, upstream, cluster, new GatewayAccess(access, upstream));
        apis.registerAll();
        // A node that has just started answers Metadata once it knows the other nodes (see afterFirstSplit).
        ApiHandler metadata = router.handler(ApiKeys.METADATA);
        apis.replace(ApiKeys.METADATA, r -> cluster.afterFirstSplit(FIRST_SPLIT_WAIT_MS)
                .thenCompose(v -> metadata.handle(r)));

        // Share groups: this node's engine, for the groups it coordinates and the partitions it leads.
        ApiHandler heartbeat = share.get(ApiKeys.SHARE_GROUP_HEARTBEAT);
        router.register(ApiKeys.SHARE_GROUP_HEARTBEAT, 1, 1, routing.heartbeat(GatewayApis::heartbeatGroup,
                r -> topics.ensure(r.bodyAs(ShareGroupHeartbeatRequest.class).data().subscribedTopicNames())
                        .thenCompose(v -> heartbeat.handle(r))));
        // A partition whose state another node serves is answered NOT_LEADER_OR_FOLLOWER by the
        // engine itself (SharePersister.serves), so it stays in the member's share session here.
        ApiHandler fetch = share.get(ApiKeys.SHARE_FETCH);
        router.register(ApiKeys.SHARE_FETCH, 1, 2, r -> topics.ensureIds(shareFetchTopics(r))
                .thenCompose(v -> {
                    preload(r, services);
                    return fetch.handle(r);
                }));
        ApiHandler acknowledge = share.get(ApiKeys.SHARE_ACKNOWLEDGE);
        router.register(ApiKeys.SHARE_ACKNOWLEDGE, 1, 2, r -> topics.ensureIds(shareAcknowledgeTopics(r))
                .thenCompose(v -> acknowledge.handle(r)));
        router.register(ApiKeys.SHARE_GROUP_DESCRIBE, 1, 1, routing.ifCoordinator(
                r -> r.bodyAs(ShareGroupDescribeRequest.class).data().groupIds(),
                share.get(ApiKeys.SHARE_GROUP_DESCRIBE)));
        ApiHandler describeOffsets = routing.ifCoordinator(GatewayApis::describedGroups,
                routing.whenSettled(share.get(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS)));
        router.register(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1, r -> topics.ensure(describedTopics(r))
                .thenCompose(v -> describeOffsets.handle(r)));
        ApiHandler alterOffsets = routing.ifCoordinator(
                r -> List.of(r.bodyAs(AlterShareGroupOffsetsRequest.class).data().groupId()),
                routing.whenSettled(share.get(ApiKeys.ALTER_SHARE_GROUP_OFFSETS)));
        // The topics Admin names are copied here first: no share group may have subscribed to them yet.
        router.register(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, 0, 0, r -> topics.ensure(alteredTopics(r))
                .thenCompose(v -> alterOffsets.handle(r)));
        router.register(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, 0, 0, routing.ifCoordinator(
                r -> List.of(r.bodyAs(DeleteShareGroupOffsetsRequest.class).data().groupId()),
                routing.whenSettled(share.get(ApiKeys.DELETE_SHARE_GROUP_OFFSETS))));
        // The coordinator answers those for every share-partition of the group, asking the nodes
        // that serve the others' state, as they ask it.
        services.shareOffsets().elsewhere(new PeerShareState(peers, cluster));
        PeerShareStateApis.register(router, services.shareOffsets(), services.topics(), topics,
                () -> cluster.settled(state::owns), access);

        apis.replace(ApiKeys.LIST_GROUPS, routing.whenSettled(LocalOrUpstream.listGroups(localListGroups,
                router.handler(ApiKeys.LIST_GROUPS), routing::coordinates)));
        apis.replace(ApiKeys.DELETE_GROUPS, LocalOrUpstream.deleteGroups(localDeleteGroups, router.handler(ApiKeys.DELETE_GROUPS),
                group -> services.shareGroups().isShareGroup(group)));
        apis.replace(ApiKeys.DESCRIBE_CONFIGS, LocalOrUpstream.describeConfigs(caughtUpFirst(localDescribeConfigs, settings),
                router.handler(ApiKeys.DESCRIBE_CONFIGS)));
        apis.replace(ApiKeys.INCREMENTAL_ALTER_CONFIGS, LocalOrUpstream.incrementalAlterConfigs(
                published(localAlterConfigs, services, settings), router.handler(ApiKeys.INCREMENTAL_ALTER_CONFIGS)));
        services.shareLogSource(new Mirrors(upstream, services.logs(), settings));
        return cluster;
    }

    /**
     * The local IncrementalAlterConfigs of share-group settings, whose changes then go to every
     * gateway node through the upstream; answered once the upstream has them.
     */
    private static ApiHandler published(ApiHandler local, BrokerServices services, GroupConfigSync settings) {
        return caughtUpFirst(request -> {
            IncrementalAlterConfigsRequestData in = request.bodyAs(IncrementalAlterConfigsRequest.class).data();
            if (in.validateOnly()) {
                return local.handle(request);
            }
            // Numbered before they apply here, so this node's older records of a group are skipped.
            Map<String, Long> changes = new java.util.HashMap<>();
            in.resources().forEach(r -> changes.put(r.resourceName(), settings.beginChange(r.resourceName())));
            return local.handle(request).thenCompose(answer -> {
                List<CompletableFuture<Void>> writes = new ArrayList<>();
                for (IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse r
                        : ((IncrementalAlterConfigsResponseData) answer.data()).responses()) {
                    if (r.errorCode() == Errors.NONE.code()) {
                        writes.add(settings.publish(r.resourceName(),
                                services.shareGroups().config(r.resourceName()).overrides(),
                                changes.get(r.resourceName())));
                    }
                }
                return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
                        .handle((v, failure) -> failure == null ? answer
                                : request.body().getErrorResponse(0, Forwarding.unwrap(failure)));
            });
        }, settings);
    }

    /**
     * {@code local}, once this node has applied every share-group setting written to the upstream
     * before the request came. Admin sends a GROUP resource's DescribeConfigs and
     * IncrementalAlterConfigs to any broker, so the change a client just made through another node
     * may not have reached this one yet: without this, a read showed the old value, and a change
     * of another setting wrote the group's whole settings without that change, undoing it.
     * Should the upstream not say how far the settings go, this node answers with what it has.
     */
    private static ApiHandler caughtUpFirst(ApiHandler local, GroupConfigSync settings) {
        return request -> settings.caughtUp().exceptionally(failure -> null)
                .thenCompose(v -> local.handle(request));
    }

    /**
     * Starts loading the share-partitions a ShareFetch adds, side by side: on a gateway each load
     * asks the upstream (a start offset, a first write), which acquisition would do one at a time.
     */
    private static void preload(ApiRequest request, BrokerServices services) {
        ShareFetchRequestData data = request.bodyAs(ShareFetchRequest.class).data();
        for (ShareFetchRequestData.FetchTopic t : data.topics()) {
            TopicMetadata topic = services.topics().topic(t.topicId());
            if (topic == null) {
                continue;
            }
            for (ShareFetchRequestData.FetchPartition p : t.partitions()) {
                services.shares().preload(new TopicPartition(topic.name(), p.partitionIndex()),
                        new SharePartitionKey(data.groupId(), t.topicId(), p.partitionIndex()));
            }
        }
    }

    private static List<String> describedGroups(ApiRequest request) {
        List<String> ids = new ArrayList<>();
        request.bodyAs(DescribeShareGroupOffsetsRequest.class).data().groups().forEach(g -> ids.add(g.groupId()));
        return ids;
    }

    private static List<String> describedTopics(ApiRequest request) {
        List<String> names = new ArrayList<>();
        request.bodyAs(DescribeShareGroupOffsetsRequest.class).data().groups().forEach(g -> {
            if (g.topics() != null) {
                g.topics().forEach(t -> names.add(t.topicName()));
            }
        });
        return names;
    }

    private static List<String> alteredTopics(ApiRequest request) {
        List<String> names = new ArrayList<>();
        request.bodyAs(AlterShareGroupOffsetsRequest.class).data().topics().forEach(t -> names.add(t.topicName()));
        return names;
    }

    private static List<Uuid> shareFetchTopics(ApiRequest request) {
        List<Uuid> ids = new ArrayList<>();
        request.bodyAs(ShareFetchRequest.class).data().topics().forEach(t -> ids.add(t.topicId()));
        return ids;
    }

    private static List<Uuid> shareAcknowledgeTopics(ApiRequest request) {
        List<Uuid> ids = new ArrayList<>();
        request.bodyAs(ShareAcknowledgeRequest.class).data().topics().forEach(t -> ids.add(t.topicId()));
        return ids;
    }

    private static String heartbeatGroup(ApiRequest request) {
        return request.bodyAs(ShareGroupHeartbeatRequest.class).data().groupId();
    }

    /**
     * Replaces the handler of a forwarded API (kept at its forwarded versions); {@code handler}
     * goes upstream through the checked one it replaces, or through a local handler's own checks.
     */
    private void replace(ApiKeys api, ApiHandler handler) {
        if (router.handler(api) != null) {
            register(api, api.latestVersion(), handler);
        }
    }

    private void registerAll() {
        int timeout = upstream.requestTimeoutMs();
        forward(ApiKeys.METADATA, forwarding::metadata);
        // Partitions, to their leaders.
        forward(ApiKeys.PRODUCE, r -> partitions.forward(r, PartitionShapes.PRODUCE,
                Math.max(timeout, r.bodyAs(ProduceRequest.class).timeout() + UPSTREAM_GRACE_MS), true));
        forward(ApiKeys.FETCH, r -> partitions.forward(r, PartitionShapes.FETCH,
                timeout + r.bodyAs(FetchRequest.class).maxWait(), false));
        forward(ApiKeys.LIST_OFFSETS, r -> partitions.forward(r, PartitionShapes.LIST_OFFSETS,
                timeout, false));
        forward(ApiKeys.DELETE_RECORDS, r -> partitions.forward(r, PartitionShapes.DELETE_RECORDS,
                timeout, false));
        forward(ApiKeys.OFFSET_FOR_LEADER_EPOCH, r -> partitions.forward(r, PartitionShapes.OFFSET_FOR_LEADER_EPOCH,
                timeout, false));
        forward(ApiKeys.DESCRIBE_PRODUCERS, r -> partitions.forward(r, PartitionShapes.DESCRIBE_PRODUCERS,
                timeout, false));
        // Groups, to their coordinators.
        group(ApiKeys.OFFSET_COMMIT, r -> r.bodyAs(OffsetCommitRequest.class).data().groupId());
        forward(ApiKeys.OFFSET_FETCH, r -> r.version() < 8
                ? keyed.forward(r, Upstream.GROUP, r.bodyAs(OffsetFetchRequest.class).data().groupId())
                : keyed.forwardBatch(r, Upstream.GROUP, KeyShapes.OFFSET_FETCH));
        group(ApiKeys.OFFSET_DELETE, r -> r.bodyAs(OffsetDeleteRequest.class).data().groupId());
        forward(ApiKeys.JOIN_GROUP, r -> {
            JoinGroupRequest join = r.bodyAs(JoinGroupRequest.class);
            int rebalanceMs = r.version() == 0 ? join.data().sessionTimeoutMs() : join.data().rebalanceTimeoutMs();
            return keyed.forward(r, Upstream.GROUP, join.data().groupId(),
                    Math.max(timeout, rebalanceMs + UPSTREAM_GRACE_MS));
        });
        group(ApiKeys.SYNC_GROUP, r -> r.bodyAs(SyncGroupRequest.class).data().groupId());
        group(ApiKeys.HEARTBEAT, r -> r.bodyAs(HeartbeatRequest.class).data().groupId());
        group(ApiKeys.LEAVE_GROUP, r -> r.bodyAs(LeaveGroupRequest.class).data().groupId());
        group(ApiKeys.CONSUMER_GROUP_HEARTBEAT, r -> r.bodyAs(ConsumerGroupHeartbeatRequest.class).data().groupId());
        group(ApiKeys.TXN_OFFSET_COMMIT, r -> r.bodyAs(TxnOffsetCommitRequest.class).data().groupId());
        forward(ApiKeys.DESCRIBE_GROUPS, r -> keyed.forwardBatch(r, Upstream.GROUP, KeyShapes.DESCRIBE_GROUPS));
        forward(ApiKeys.CONSUMER_GROUP_DESCRIBE, r -> keyed.forwardBatch(r, Upstream.GROUP,
                KeyShapes.CONSUMER_GROUP_DESCRIBE));
        forward(ApiKeys.DELETE_GROUPS, r -> keyed.forwardBatch(r, Upstream.GROUP, KeyShapes.DELETE_GROUPS));
        forward(ApiKeys.LIST_GROUPS, forwarding::listGroups);
        // Transactions, to their coordinators.
        forward(ApiKeys.INIT_PRODUCER_ID, r -> {
            String id = r.bodyAs(InitProducerIdRequest.class).data().transactionalId();
            return id == null ? forwarding.toAny(r) : keyed.forward(r, Upstream.TRANSACTION, id);
        });
        forward(ApiKeys.ADD_PARTITIONS_TO_TXN, ADD_PARTITIONS_TO_TXN_CLIENT_MAX, r -> keyed.forward(r,
                Upstream.TRANSACTION, r.bodyAs(AddPartitionsToTxnRequest.class).data().v3AndBelowTransactionalId()));
        transaction(ApiKeys.ADD_OFFSETS_TO_TXN, r -> r.bodyAs(AddOffsetsToTxnRequest.class).data().transactionalId());
        transaction(ApiKeys.END_TXN, r -> r.bodyAs(EndTxnRequest.class).data().transactionalId());
        forward(ApiKeys.DESCRIBE_TRANSACTIONS, r -> keyed.forwardBatch(r, Upstream.TRANSACTION,
                KeyShapes.DESCRIBE_TRANSACTIONS));
        forward(ApiKeys.LIST_TRANSACTIONS, forwarding::listTransactions);
        // Not DescribeLogDirs or AlterReplicaLogDirs: a client sends them to one broker by its id,
        // and the brokers a gateway's clients see are its nodes, which keep only mirrors of the
        // upstream's partitions. Left unadvertised, Admin.describeLogDirs fails with
        // UnsupportedVersionException instead of describing a cache; kafka-log-dirs is for the upstream.
        // Cluster-wide administration, to any broker (the upstream routes to its controller). Not
        // the SCRAM users: those are the gateway's own listeners' (UpstreamScramCredentials).
        for (ApiKeys api : new ApiKeys[] {ApiKeys.CREATE_TOPICS, ApiKeys.DELETE_TOPICS, ApiKeys.CREATE_PARTITIONS,
                ApiKeys.DESCRIBE_CONFIGS, ApiKeys.ALTER_CONFIGS, ApiKeys.INCREMENTAL_ALTER_CONFIGS,
                ApiKeys.DESCRIBE_ACLS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS, ApiKeys.DESCRIBE_CLIENT_QUOTAS,
                ApiKeys.ALTER_CLIENT_QUOTAS}) {
            if (!(access.enabled() && ACL_APIS.contains(api))) {
                forward(api, forwarding::toAny);
            }
        }
    }

    private void group(ApiKeys api, Function<ApiRequest, String> groupId) {
        forward(api, r -> keyed.forward(r, Upstream.GROUP, groupId.apply(r)));
    }

    private void transaction(ApiKeys api, Function<ApiRequest, String> transactionalId) {
        forward(api, r -> keyed.forward(r, Upstream.TRANSACTION, transactionalId.apply(r)));
    }

    private void forward(ApiKeys api, ApiHandler handler) {
        forward(api, api.latestVersion(), handler);
    }

    /** Forwards {@code api} behind its access checks, at the versions the upstream and kafka-clients share. */
    private void forward(ApiKeys api, short max, ApiHandler handler) {
        register(api, max, access.guard(api, handler));
    }

    /** Registers {@code api} at the versions the upstream and kafka-clients share, up to {@code max}. */
    private void register(ApiKeys api, short max, ApiHandler handler) {
        ApiVersion theirs = upstream.versions().apiVersion(api);
        if (theirs == null) {
            return;
        }
        int min = Math.max(api.oldestVersion(), theirs.minVersion());
        int top = Math.min(Math.min(api.latestVersion(), max), theirs.maxVersion());
        if (min <= top) {
            router.register(api, min, top, request -> guarded(handler, request));
        }
    }

    /** A handler that throws answers with the request's error response instead of closing the connection. */
    private static CompletableFuture<AbstractResponse> guarded(ApiHandler handler, ApiRequest request) {
        try {
            return handler.handle(request);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(request.body().getErrorResponse(0, e));
        }
    }
}
