package io.pier.server;

import io.pier.protocol.ApiRouter;
import io.pier.protocol.ApiVersionsHandler;
import io.pier.protocol.BrokerFeatures;
import io.pier.protocol.ClientQuotaHandlers;
import io.pier.protocol.BrokerConfigs;
import io.pier.protocol.ConfigHandlers;
import io.pier.protocol.ConfigResourceType;
import io.pier.protocol.ConsumerGroupHandlers;
import io.pier.protocol.ConsumerProtocolHandlers;
import io.pier.protocol.ConsumerOffsetHandlers;
import io.pier.protocol.CoordinatorHandlers;
import io.pier.protocol.FetchHandler;
import io.pier.protocol.GroupConfigs;
import io.pier.protocol.InitProducerIdHandler;
import io.pier.protocol.MetadataHandler;
import io.pier.protocol.OffsetHandlers;
import io.pier.protocol.ProduceHandler;
import io.pier.protocol.ProducerStateHandlers;
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
import io.pier.security.ScramCredentialStore;
import io.pier.service.BrokerServices;
import io.pier.service.NodeInfo;
import io.pier.service.ShareGroups;
import io.pier.service.TopicService;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.ApiKeys;

/**
 * The Kafka APIs of one broker: each handler, given the services it translates to, and the version
 * range ApiVersions advertises for it. Only what is registered here is served.
 */
public final class Apis {
    private Apis() {}

    /**
     * SaslHandshake and SaslAuthenticate, which a SASL listener's gate answers until the client is
     * authenticated (these handlers see them only after, or on other listeners), and the SCRAM
     * credential admin APIs behind kafka-configs {@code --entity-type users} (with the client
     * quotas it describes alongside: none).
     */
    public static void registerSasl(ApiRouter router, ScramCredentialStore scram) {
        ScramCredentialHandlers credentials = new ScramCredentialHandlers(scram);
        router.register(ApiKeys.SASL_HANDSHAKE, 1, 1, SaslHandlers::handshake)
                .register(ApiKeys.SASL_AUTHENTICATE, 0, 2, SaslHandlers::authenticate)
                .register(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0, credentials::describe)
                .register(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, 0, 0, credentials::alter)
                .register(ApiKeys.DESCRIBE_CLIENT_QUOTAS, 0, 1, ClientQuotaHandlers::describe);
    }

    /** Registers every API this broker serves, with the version range it advertises. */
    public static void register(ApiRouter router, BrokerServices services, BrokerConfig config,
            Supplier<NodeInfo> node, long startWallMs) {
        TopicService topics = services.topics();
        ShareGroups shareGroups = services.shareGroups();
        TopicAdminHandlers topicAdmin = new TopicAdminHandlers(topics, config.numPartitions());
        CoordinatorHandlers coordinators = new CoordinatorHandlers(node);
        OffsetHandlers offsets = new OffsetHandlers(services.logs());
        Map<ConfigResource.Type, ConfigResourceType> configTypes = new EnumMap<>(ConfigResource.Type.class);
        configTypes.put(ConfigResource.Type.TOPIC, new TopicConfigs(topics));
        configTypes.put(ConfigResource.Type.BROKER, new BrokerConfigs(topics, config.nodeId(), config.raw()));
        configTypes.put(ConfigResource.Type.GROUP, new GroupConfigs(shareGroups));
        ShareAcks shareAcks = new ShareAcks(topics, services.shares());
        ConfigHandlers configs = new ConfigHandlers(configTypes);
        ConsumerOffsetHandlers consumerOffsets = new ConsumerOffsetHandlers(services.consumerGroups());
        ConsumerGroupHandlers consumerGroups = new ConsumerGroupHandlers(services.consumerGroups());
        ConsumerProtocolHandlers consumerProtocol = new ConsumerProtocolHandlers(services.consumerGroups());
        ShareGroupAdminHandlers shareAdmin = new ShareGroupAdminHandlers(shareGroups, services.shareOffsets(),
                services.consumerGroups());
        ShareGroupOffsetHandlers shareOffsets = new ShareGroupOffsetHandlers(shareGroups, services.shareOffsets(),
                topics);
        TransactionHandlers txn = new TransactionHandlers(services.transactions());
        ProducerStateHandlers producerStates = new ProducerStateHandlers(services.logs());
        TxnOffsetCommitHandler txnOffsets = new TxnOffsetCommitHandler(services.transactions(),
                services.consumerGroups());
        router.register(ApiKeys.API_VERSIONS, 0, 5, new ApiVersionsHandler(router,
                        BrokerFeatures.of(services.transactions().transactionVersion(), startWallMs)))
                .register(ApiKeys.METADATA, 0, 13,
                        new MetadataHandler(node, topics, config.autoCreateTopics(), config.numPartitions()))
                .register(ApiKeys.PRODUCE, 3, 13, new ProduceHandler(topics, services.logs(), services.transactions()))
                .register(ApiKeys.FETCH, 4, 17, new FetchHandler(topics, services.logs(), services.polls()))
                .register(ApiKeys.LIST_OFFSETS, 1, 10, offsets::listOffsets)
                .register(ApiKeys.DELETE_RECORDS, 0, 2, offsets::deleteRecords)
                .register(ApiKeys.CREATE_TOPICS, 2, 7, topicAdmin::createTopics)
                .register(ApiKeys.DELETE_TOPICS, 1, 6, topicAdmin::deleteTopics)
                .register(ApiKeys.CREATE_PARTITIONS, 0, 3, topicAdmin::createPartitions)
                .register(ApiKeys.INIT_PRODUCER_ID, 0, 5, new InitProducerIdHandler(services.producerIds(), txn))
                .register(ApiKeys.FIND_COORDINATOR, 0, 6, coordinators::findCoordinator)
                .register(ApiKeys.OFFSET_COMMIT, 2, 9, consumerOffsets::offsetCommit)
                .register(ApiKeys.OFFSET_FETCH, 1, 9, consumerOffsets::offsetFetch)
                .register(ApiKeys.OFFSET_DELETE, 0, 0, consumerOffsets::offsetDelete)
                .register(ApiKeys.JOIN_GROUP, 0, 9, consumerGroups::joinGroup)
                .register(ApiKeys.SYNC_GROUP, 0, 5, consumerGroups::syncGroup)
                .register(ApiKeys.HEARTBEAT, 0, 4, consumerGroups::heartbeat)
                .register(ApiKeys.LEAVE_GROUP, 0, 5, consumerGroups::leaveGroup)
                .register(ApiKeys.DESCRIBE_GROUPS, 0, 6, consumerGroups::describeGroups)
                .register(ApiKeys.CONSUMER_GROUP_HEARTBEAT, 0, 1, consumerProtocol::heartbeat)
                .register(ApiKeys.CONSUMER_GROUP_DESCRIBE, 0, 1, consumerProtocol::describe)
                .register(ApiKeys.DESCRIBE_CLUSTER, 0, 2, coordinators::describeCluster)
                .register(ApiKeys.DESCRIBE_CONFIGS, 1, 4, configs::describeConfigs)
                .register(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 0, 1, configs::incrementalAlterConfigs)
                .register(ApiKeys.SHARE_GROUP_HEARTBEAT, 1, 1, new ShareGroupHeartbeatHandler(shareGroups))
                .register(ApiKeys.SHARE_FETCH, 1, 2, new ShareFetchHandler(topics, services.shareSessions(),
                        shareAcks, services.shares(), services.polls()))
                .register(ApiKeys.SHARE_ACKNOWLEDGE, 1, 2,
                        new ShareAcknowledgeHandler(services.shareSessions(), shareAcks, services.shares()))
                .register(ApiKeys.LIST_GROUPS, 0, 5, shareAdmin::listGroups)
                .register(ApiKeys.SHARE_GROUP_DESCRIBE, 1, 1, shareAdmin::describe)
                .register(ApiKeys.DELETE_GROUPS, 0, 3, shareAdmin::deleteGroups)
                .register(ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1, shareOffsets::describeOffsets)
                .register(ApiKeys.ALTER_SHARE_GROUP_OFFSETS, 0, 0, shareOffsets::alterOffsets)
                .register(ApiKeys.DELETE_SHARE_GROUP_OFFSETS, 0, 0, shareOffsets::deleteOffsets)
                .register(ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 5, txn::addPartitionsToTxn)
                .register(ApiKeys.ADD_OFFSETS_TO_TXN, 0, 4, txn::addOffsetsToTxn)
                // v5 of both is transaction version 2 (KIP-890), which clients use only when the
                // transaction.version feature says so; Pier does not advertise it yet.
                .register(ApiKeys.END_TXN, 0, 5, txn::endTxn)
                .register(ApiKeys.TXN_OFFSET_COMMIT, 0, 5, txnOffsets::handle)
                .register(ApiKeys.DESCRIBE_TRANSACTIONS, 0, 0, txn::describeTransactions)
                .register(ApiKeys.LIST_TRANSACTIONS, 0, 2, txn::listTransactions)
                // kafka-transactions: describe-producers, find-hanging, and abort (Admin.abortTransaction
                // writes the marker itself, with WriteTxnMarkers to the partition's leader).
                .register(ApiKeys.DESCRIBE_PRODUCERS, 0, 0, producerStates::describeProducers)
                .register(ApiKeys.WRITE_TXN_MARKERS, 1, 2, producerStates::writeTxnMarkers);
    }
}
