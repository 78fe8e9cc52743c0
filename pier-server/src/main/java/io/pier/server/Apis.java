package io.pier.server;

import io.pier.protocol.Access;
import io.pier.protocol.AclHandlers;
import io.pier.protocol.ApiRouter;
import io.pier.protocol.ApiVersionsHandler;
import io.pier.protocol.BrokerFeatures;
import io.pier.protocol.BrokerConfigs;
import io.pier.protocol.ClientQuotaHandlers;
import io.pier.protocol.ConfigHandlers;
import io.pier.protocol.ConfigResourceType;
import io.pier.protocol.ConsumerGroupHandlers;
import io.pier.protocol.ConsumerProtocolHandlers;
import io.pier.protocol.ConsumerOffsetHandlers;
import io.pier.protocol.CoordinatorHandlers;
import io.pier.protocol.FetchHandler;
import io.pier.protocol.GroupConfigs;
import io.pier.protocol.InitProducerIdHandler;
import io.pier.protocol.LogDirHandlers;
import io.pier.protocol.MetadataHandler;
import io.pier.protocol.OffsetHandlers;
import io.pier.protocol.ProduceHandler;
import io.pier.protocol.ProducerStateHandlers;
import io.pier.protocol.QuotaThrottle;
import io.pier.protocol.SaslHandlers;
import io.pier.protocol.ScramCredentialHandlers;
import io.pier.protocol.ShareAcknowledgeHandler;
import io.pier.protocol.ShareAcks;
import io.pier.protocol.ShareFetchHandler;
import io.pier.protocol.ShareGroupAdminHandlers;
import io.pier.protocol.ShareGroupHeartbeatHandler;
import io.pier.protocol.ShareGroupOffsetHandlers;
import io.pier.protocol.TopicAdminHandlers;
import io.pier.protocol.TopicConfigs;
import io.pier.protocol.TransactionHandlers;
import io.pier.protocol.TxnOffsetCommitHandler;
import io.pier.common.Clock;
import io.pier.security.ScramCredentialStore;
import io.pier.service.BrokerServices;
import io.pier.service.RateQuotas;
import io.pier.service.MetadataWriter;
import io.pier.service.NodeInfo;
import io.pier.service.ShareGroups;
import io.pier.security.acl.AclAuthorizer;
import io.pier.service.TopicService;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;

/**
 * The Kafka APIs of one broker: each handler, given the services it translates to, and the version
 * range ApiVersions advertises for it. Only what is registered here is served.
 */
public final class Apis {
    private Apis() {}

    /**
     * SaslHandshake and SaslAuthenticate, which a SASL listener's gate answers until the client is
     * authenticated (these handlers see them only after, or on other listeners), and the SCRAM
     * credential admin APIs behind kafka-configs {@code --entity-type users}, which Kafka checks as
     * cluster DESCRIBE and ALTER; {@code acls} null means authorization is off.
     */
    public static void registerSasl(ApiRouter router, ScramCredentialStore scram, AclAuthorizer acls,
            MetadataWriter writer) {
        Access access = access(acls);
        ScramCredentialHandlers credentials = new ScramCredentialHandlers(scram, writer);
        router.register(ApiKeys.SASL_HANDSHAKE, 1, 1, SaslHandlers::handshake)
                .register(ApiKeys.SASL_AUTHENTICATE, 0, 2, SaslHandlers::authenticate)
                .register(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0,
                        access.requireCluster(AclOperation.DESCRIBE, credentials::describe))
                .register(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, 0,
                        access.requireCluster(AclOperation.ALTER, credentials::alter));
    }

    private static Access access(AclAuthorizer acls) {
        return acls == null ? Access.ALLOW_ALL : new Access(acls);
    }

    /** Registers every API this broker serves, authorization off. */
    public static void register(ApiRouter router, BrokerServices services, BrokerConfig config,
            Supplier<NodeInfo> node, Clock clock) {
        register(router, services, config, node, clock, null);
    }

    /**
     * Registers every API this broker serves, with the version range it advertises; {@code acls}
     * null means authorization is off (every request allowed).
     */
    public static void register(ApiRouter router, BrokerServices services, BrokerConfig config,
            Supplier<NodeInfo> node, Clock clock, AclAuthorizer acls) {
        long startWallMs = clock.wallMs();
        Access access = access(acls);
        TopicService topics = services.topics();
        AclHandlers aclApis = new AclHandlers(acls, topics::metadataWrite);
        ShareGroups shareGroups = services.shareGroups();
        TopicAdminHandlers topicAdmin = new TopicAdminHandlers(topics, config.numPartitions(), access);
        CoordinatorHandlers coordinators = new CoordinatorHandlers(node, access);
        OffsetHandlers offsets = new OffsetHandlers(services.logs(), access);
        Map<ConfigResource.Type, ConfigResourceType> configTypes = new EnumMap<>(ConfigResource.Type.class);
        configTypes.put(ConfigResource.Type.TOPIC, new TopicConfigs(topics));
        configTypes.put(ConfigResource.Type.BROKER, new BrokerConfigs(topics, config.nodeId(), config.raw()));
        configTypes.put(ConfigResource.Type.GROUP, new GroupConfigs(shareGroups));
        ShareAcks shareAcks = new ShareAcks(topics, services.shares());
        ConfigHandlers configs = new ConfigHandlers(configTypes, access);
        ClientQuotaHandlers quotas = new ClientQuotaHandlers(topics);
        RateQuotas produceQuotas = new RateQuotas("producer_byte_rate", topics::clientQuotas, clock,
                config.quotaWindowSizeSeconds() * 1000L, config.quotaWindowNum());
        RateQuotas fetchQuotas = new RateQuotas("consumer_byte_rate", topics::clientQuotas, clock,
                config.quotaWindowSizeSeconds() * 1000L, config.quotaWindowNum());
        RateQuotas requestQuotas = RateQuotas.requestPercentage(topics::clientQuotas, clock,
                config.quotaWindowSizeSeconds() * 1000L, config.quotaWindowNum());
        router.requestTimeQuota(requestQuotas::record);
        ConsumerOffsetHandlers consumerOffsets = new ConsumerOffsetHandlers(services.consumerGroups(), access);
        ConsumerGroupHandlers consumerGroups = new ConsumerGroupHandlers(services.consumerGroups(), access);
        ConsumerProtocolHandlers consumerProtocol = new ConsumerProtocolHandlers(services.consumerGroups(), access);
        ShareGroupAdminHandlers shareAdmin = new ShareGroupAdminHandlers(shareGroups, services.shareOffsets(),
                services.consumerGroups(), access);
        ShareGroupOffsetHandlers shareOffsets = new ShareGroupOffsetHandlers(shareGroups, services.shareOffsets(),
                topics, access);
        TransactionHandlers txn = new TransactionHandlers(services.transactions(), access);
        ProducerStateHandlers producerStates = new ProducerStateHandlers(services.logs(), access);
        TxnOffsetCommitHandler txnOffsets = new TxnOffsetCommitHandler(services.transactions(),
                services.consumerGroups(), access);
        LogDirHandlers logDirs = new LogDirHandlers(services.logDirs(), access);
        router.register(ApiKeys.API_VERSIONS, 0, 5, new ApiVersionsHandler(router,
                        BrokerFeatures.of(services.transactions().transactionVersion(), startWallMs)))
                .register(ApiKeys.METADATA, 0, 13,
                        new MetadataHandler(node, topics, config.autoCreateTopics(), config.numPartitions(),
                                access))
                .register(ApiKeys.PRODUCE, 3, 13, QuotaThrottle.produce(
                        new ProduceHandler(topics, services.logs(), services.transactions(), access), produceQuotas))
                .register(ApiKeys.FETCH, 4, 17, QuotaThrottle.fetch(
                        new FetchHandler(topics, services.logs(), services.polls(), access), fetchQuotas))
                .register(ApiKeys.LIST_OFFSETS, 1, 10, offsets::listOffsets)
                .register(ApiKeys.DELETE_RECORDS, 0, 2, offsets::deleteRecords)
                .register(ApiKeys.CREATE_TOPICS, 2, 7, topicAdmin::createTopics)
                .register(ApiKeys.DELETE_TOPICS, 1, 6, topicAdmin::deleteTopics)
                .register(ApiKeys.CREATE_PARTITIONS, 0, 3, topicAdmin::createPartitions)
                .register(ApiKeys.INIT_PRODUCER_ID, 0, 5, new InitProducerIdHandler(services.producerIds(), txn, access))
                .register(ApiKeys.FIND_COORDINATOR, 0, 6, coordinators::findCoordinator)
                .register(ApiKeys.OFFSET_COMMIT, 2, 9, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(OffsetCommitRequest.class).data().groupId(),
                        consumerOffsets::offsetCommit))
                .register(ApiKeys.OFFSET_FETCH, 1, 9, access.requireGroups(AclOperation.DESCRIBE, Apis::offsetFetchGroups, consumerOffsets::offsetFetch))
                .register(ApiKeys.OFFSET_DELETE, 0, 0, access.requireGroup(AclOperation.DELETE,
                        r -> r.bodyAs(OffsetDeleteRequest.class).data().groupId(),
                        consumerOffsets::offsetDelete))
                .register(ApiKeys.JOIN_GROUP, 0, 9, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(JoinGroupRequest.class).data().groupId(),
                        consumerGroups::joinGroup))
                .register(ApiKeys.SYNC_GROUP, 0, 5, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(SyncGroupRequest.class).data().groupId(),
                        consumerGroups::syncGroup))
                .register(ApiKeys.HEARTBEAT, 0, 4, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(HeartbeatRequest.class).data().groupId(),
                        consumerGroups::heartbeat))
                .register(ApiKeys.LEAVE_GROUP, 0, 5, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(LeaveGroupRequest.class).data().groupId(),
                        consumerGroups::leaveGroup))
                .register(ApiKeys.DESCRIBE_GROUPS, 0, 6, consumerGroups::describeGroups)
                .register(ApiKeys.CONSUMER_GROUP_HEARTBEAT, 0, 1, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(ConsumerGroupHeartbeatRequest.class).data().groupId(),
                        access.requireTopics(AclOperation.DESCRIBE,
                                r -> r.bodyAs(ConsumerGroupHeartbeatRequest.class).data().subscribedTopicNames(),
                                consumerProtocol::heartbeat)))
                .register(ApiKeys.CONSUMER_GROUP_DESCRIBE, 0, 1, consumerProtocol::describe)
                .register(ApiKeys.DESCRIBE_CLUSTER, 0, 2, coordinators::describeCluster)
                // kafka-log-dirs; v0 of both was removed in Kafka 4.0 (KIP-896). DescribeLogDirs checks
                // cluster DESCRIBE itself, as its refusal has a shape of its own.
                .register(ApiKeys.DESCRIBE_LOG_DIRS, 1, 5, logDirs::describe)
                .register(ApiKeys.ALTER_REPLICA_LOG_DIRS, 1, 2, access.requireCluster(AclOperation.ALTER, logDirs::alter))
                .register(ApiKeys.DESCRIBE_CONFIGS, 1, 4, configs::describeConfigs)
                .register(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 0, 1, configs::incrementalAlterConfigs)
                // Kafka checks quotas as cluster configs: DESCRIBE_CONFIGS to read, ALTER_CONFIGS to change.
                .register(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 0, 1,
                        access.requireCluster(AclOperation.DESCRIBE_CONFIGS, quotas::describe))
                .register(ApiKeys.ALTER_CLIENT_QUOTAS, 0, 1,
                        access.requireCluster(AclOperation.ALTER_CONFIGS, quotas::alter))
                .register(ApiKeys.SHARE_GROUP_HEARTBEAT, 1, 1, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(ShareGroupHeartbeatRequest.class).data().groupId(),
                        access.requireTopics(AclOperation.DESCRIBE,
                                r -> r.bodyAs(ShareGroupHeartbeatRequest.class).data().subscribedTopicNames(),
                                new ShareGroupHeartbeatHandler(shareGroups))))
                .register(ApiKeys.SHARE_FETCH, 1, 2, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(ShareFetchRequest.class).data().groupId(),
                        QuotaThrottle.shareFetch(new ShareFetchHandler(topics, services.shareSessions(), shareAcks,
                                services.shares(), services.polls(), access), fetchQuotas)))
                .register(ApiKeys.SHARE_ACKNOWLEDGE, 1, 2,
                        access.requireGroup(AclOperation.READ,
                                r -> r.bodyAs(ShareAcknowledgeRequest.class).data().groupId(),
                                new ShareAcknowledgeHandler(services.shareSessions(), shareAcks, services.shares(),
                                        access)))
                .register(ApiKeys.LIST_GROUPS, 0, 5, shareAdmin::listGroups)
                .register(ApiKeys.SHARE_GROUP_DESCRIBE, 1, 1, shareAdmin::describe)
                .register(ApiKeys.DELETE_GROUPS, 0, 3, shareAdmin::deleteGroups)
                .register(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1, shareOffsets::describeOffsets)
                .register(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, 0, 0, access.requireGroup(AclOperation.READ,
                        r -> r.bodyAs(AlterShareGroupOffsetsRequest.class).data().groupId(), shareOffsets::alterOffsets))
                .register(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, 0, 0, access.requireGroup(AclOperation.DELETE,
                        r -> r.bodyAs(DeleteShareGroupOffsetsRequest.class).data().groupId(),
                        shareOffsets::deleteOffsets))
                .register(ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 5, r -> r.version() >= 4
                        // v4+ batches transactions and is sent by brokers only.
                        ? access.requireCluster(AclOperation.CLUSTER_ACTION, txn::addPartitionsToTxn).handle(r)
                        : access.requireTransactionalId(AclOperation.WRITE,
                                q -> q.bodyAs(AddPartitionsToTxnRequest.class).data().v3AndBelowTransactionalId(),
                                txn::addPartitionsToTxn).handle(r))
                .register(ApiKeys.ADD_OFFSETS_TO_TXN, 0, 4, access.requireTransactionalId(AclOperation.WRITE,
                        r -> r.bodyAs(AddOffsetsToTxnRequest.class).data().transactionalId(),
                        access.requireGroup(AclOperation.READ,
                                r -> r.bodyAs(AddOffsetsToTxnRequest.class).data().groupId(), txn::addOffsetsToTxn)))
                // v5 of both is transaction version 2 (KIP-890), which clients use only when the
                // transaction.version feature says so; Pier does not advertise it yet.
                .register(ApiKeys.END_TXN, 0, 5, access.requireTransactionalId(AclOperation.WRITE,
                        r -> r.bodyAs(EndTxnRequest.class).data().transactionalId(), txn::endTxn))
                .register(ApiKeys.TXN_OFFSET_COMMIT, 0, 5, access.requireTransactionalId(AclOperation.WRITE,
                        r -> r.bodyAs(TxnOffsetCommitRequest.class).data().transactionalId(),
                        access.requireGroup(AclOperation.READ,
                                r -> r.bodyAs(TxnOffsetCommitRequest.class).data().groupId(), txnOffsets::handle)))
                .register(ApiKeys.DESCRIBE_TRANSACTIONS, 0, 0, txn::describeTransactions)
                .register(ApiKeys.LIST_TRANSACTIONS, 0, 2, txn::listTransactions)
                // kafka-transactions: describe-producers, find-hanging, and abort (Admin.abortTransaction
                // writes the marker itself, with WriteTxnMarkers to the partition's leader).
                .register(ApiKeys.DESCRIBE_PRODUCERS, 0, 0, producerStates::describeProducers)
                .register(ApiKeys.WRITE_TXN_MARKERS, 1, 2,
                        access.requireCluster(AclOperation.CLUSTER_ACTION, producerStates::writeTxnMarkers))
                                // v0-1 of the three ACL APIs were removed in Kafka 4.0 (KIP-896); kafka-clients parses v2-3.
                .register(ApiKeys.CREATE_ACLS, 2, 3, access.requireCluster(AclOperation.ALTER, aclApis::createAcls))
                .register(ApiKeys.DESCRIBE_ACLS, 2, 3,
                        access.requireCluster(AclOperation.DESCRIBE, aclApis::describeAcls))
                .register(ApiKeys.DELETE_ACLS, 2, 3, access.requireCluster(AclOperation.ALTER, aclApis::deleteAcls));
    }

    /** The groups of an OffsetFetch: one before v8, a batch from v8. */
    private static List<String> offsetFetchGroups(io.pier.protocol.ApiRequest request) {
        OffsetFetchRequest body = request.bodyAs(OffsetFetchRequest.class);
        if (request.version() < 8) {
            return List.of(body.data().groupId());
        }
        List<String> out = new ArrayList<>();
        body.data().groups().forEach(g -> out.add(g.groupId()));
        return out;
    }
}
