package io.pier.gateway;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.resource.ResourceType;

import io.pier.gateway.PartitionForwarding.PartitionRef;
import io.pier.protocol.Access;
import io.pier.protocol.ApiHandler;
import io.pier.protocol.ApiRequest;

/**
 * Kafka's ACLs in front of everything a gateway forwards. The upstream authorizes the gateway's
 * own principal, so each forwarded request is checked here for the client's first, with the rules
 * the broker's own handlers apply and the errors Kafka answers:
 * <ul>
 * <li>a request about one group or transactional id is refused whole;
 * <li>a request naming resources one by one (partitions, groups, topics, config resources) is cut:
 *     the allowed part is forwarded, the refused part answered here with each resource's
 *     authorization error, and the answers joined;
 * <li>a read whose answer lists what the principal may not see (every topic, every group) is
 *     forwarded and its answer trimmed, and authorized operations are the client's, not the
 *     gateway's.
 * </ul>
 * A topic named by an id the gateway cannot resolve, even after reading the metadata again, is
 * answered UNKNOWN_TOPIC_ID, as Kafka does (the client retries), rather than let through unchecked.
 */
final class GatewayAccess {
    /** Where a request names the resources one check is about, and how a copy keeps only some. */
    interface Items<Q extends ApiMessage, R extends ApiMessage, K> {
        List<K> keys(Q request);

        void retain(Q copy, Predicate<K> keep);

        void join(R into, R part);
    }

    /** A config resource as DescribeConfigs and (Incremental)AlterConfigs name it. */
    record Resource(byte type, String name) {}

    private final Access access;
    private final Upstream upstream;

    GatewayAccess(Access access, Upstream upstream) {
        this.access = access;
        this.upstream = upstream;
    }

    boolean enabled() {
        return access.enabled();
    }

    /**
     * {@code forwarded} behind the checks of {@code api}; unchanged with authorization off. An API
     * without a rule here fails the gateway's start rather than go upstream unchecked.
     */
    ApiHandler guard(ApiKeys api, ApiHandler forwarded) {
        if (!access.enabled()) {
            return forwarded;
        }
        return switch (api) {
            case METADATA -> request -> metadata(request, forwarded);
            case PRODUCE -> access.requireTransactionalId(AclOperation.WRITE,
                    r -> r.bodyAs(ProduceRequest.class).transactionalId(),
                    partitions(PartitionShapes.PRODUCE, AclOperation.WRITE, forwarded));
            case FETCH -> fetch(forwarded);
            case LIST_OFFSETS -> partitions(PartitionShapes.LIST_OFFSETS, AclOperation.DESCRIBE, forwarded);
            case DELETE_RECORDS -> partitions(PartitionShapes.DELETE_RECORDS, AclOperation.DELETE, forwarded);
            case OFFSET_FOR_LEADER_EPOCH -> partitions(PartitionShapes.OFFSET_FOR_LEADER_EPOCH, AclOperation.DESCRIBE,
                    forwarded);
            case DESCRIBE_PRODUCERS -> partitions(PartitionShapes.DESCRIBE_PRODUCERS, AclOperation.READ, forwarded);
            case OFFSET_COMMIT -> access.requireGroup(AclOperation.READ,
                    r -> r.bodyAs(OffsetCommitRequest.class).data().groupId(),
                    topics(OFFSET_COMMIT, AclOperation.READ, forwarded, null));
            case OFFSET_FETCH -> offsetFetch(forwarded);
            case OFFSET_DELETE -> access.requireGroup(AclOperation.DELETE,
                    r -> r.bodyAs(OffsetDeleteRequest.class).data().groupId(),
                    topics(OFFSET_DELETE, AclOperation.READ, forwarded, GatewayAccess::offsetDeleteRefused));
            case JOIN_GROUP -> readGroup(r -> r.bodyAs(JoinGroupRequest.class).data().groupId(), forwarded);
            case SYNC_GROUP -> readGroup(r -> r.bodyAs(SyncGroupRequest.class).data().groupId(), forwarded);
            case HEARTBEAT -> readGroup(r -> r.bodyAs(HeartbeatRequest.class).data().groupId(), forwarded);
            case LEAVE_GROUP -> readGroup(r -> r.bodyAs(LeaveGroupRequest.class).data().groupId(), forwarded);
            case CONSUMER_GROUP_HEARTBEAT -> readGroup(r -> r.bodyAs(ConsumerGroupHeartbeatRequest.class).data().groupId(),
                    access.requireTopics(AclOperation.DESCRIBE,
                            r -> r.bodyAs(ConsumerGroupHeartbeatRequest.class).data().subscribedTopicNames(), forwarded));
            case TXN_OFFSET_COMMIT -> access.requireTransactionalId(AclOperation.WRITE,
                    r -> r.bodyAs(TxnOffsetCommitRequest.class).data().transactionalId(),
                    readGroup(r -> r.bodyAs(TxnOffsetCommitRequest.class).data().groupId(),
                            topics(TXN_OFFSET_COMMIT, AclOperation.READ, forwarded, null)));
            case DESCRIBE_GROUPS -> keyed(KeyShapes.DESCRIBE_GROUPS, ResourceType.GROUP, AclOperation.DESCRIBE,
                    Errors.GROUP_AUTHORIZATION_FAILED, this::describedGroups, forwarded);
            case CONSUMER_GROUP_DESCRIBE -> keyed(KeyShapes.CONSUMER_GROUP_DESCRIBE, ResourceType.GROUP,
                    AclOperation.DESCRIBE, Errors.GROUP_AUTHORIZATION_FAILED, this::describedConsumerGroups, forwarded);
            case DELETE_GROUPS -> keyed(KeyShapes.DELETE_GROUPS, ResourceType.GROUP, AclOperation.DELETE,
                    Errors.GROUP_AUTHORIZATION_FAILED, null, forwarded);
            case LIST_GROUPS -> trimmed(forwarded, this::listedGroups);
            case INIT_PRODUCER_ID -> request -> {
                String id = request.bodyAs(InitProducerIdRequest.class).data().transactionalId();
                if (id != null) {
                    return access.transactionalId(request, AclOperation.WRITE, id) ? forwarded.handle(request)
                            : Access.refuse(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
                }
                return access.mayProduceIdempotently(request) ? forwarded.handle(request)
                        : Access.refuse(request, Errors.CLUSTER_AUTHORIZATION_FAILED);
            };
            case ADD_PARTITIONS_TO_TXN -> access.requireTransactionalId(AclOperation.WRITE,
                    r -> r.bodyAs(AddPartitionsToTxnRequest.class).data().v3AndBelowTransactionalId(),
                    addPartitionsToTxn(forwarded));
            case ADD_OFFSETS_TO_TXN -> access.requireTransactionalId(AclOperation.WRITE,
                    r -> r.bodyAs(AddOffsetsToTxnRequest.class).data().transactionalId(),
                    readGroup(r -> r.bodyAs(AddOffsetsToTxnRequest.class).data().groupId(), forwarded));
            case END_TXN -> access.requireTransactionalId(AclOperation.WRITE,
                    r -> r.bodyAs(EndTxnRequest.class).data().transactionalId(), forwarded);
            case DESCRIBE_TRANSACTIONS -> keyed(KeyShapes.DESCRIBE_TRANSACTIONS, ResourceType.TRANSACTIONAL_ID,
                    AclOperation.DESCRIBE, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, this::describedTransactions,
                    forwarded);
            case LIST_TRANSACTIONS -> trimmed(forwarded, this::listedTransactions);
            case CREATE_TOPICS -> request -> cut(request, CREATE_TOPICS,
                    name -> access.mayCreateTopic(request, name) ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED,
                    null, forwarded);
            case DELETE_TOPICS -> request -> resolved(request, DELETE_TOPICS, AclOperation.DELETE, null, forwarded);
            case CREATE_PARTITIONS -> request -> cut(request, CREATE_PARTITIONS,
                    name -> access.topic(request, AclOperation.ALTER, name) ? Errors.NONE
                            : Errors.TOPIC_AUTHORIZATION_FAILED, null, forwarded);
            case DESCRIBE_CONFIGS -> configs(DESCRIBE_CONFIGS, AclOperation.DESCRIBE_CONFIGS, forwarded);
            case ALTER_CONFIGS -> configs(ALTER_CONFIGS, AclOperation.ALTER_CONFIGS, forwarded);
            case INCREMENTAL_ALTER_CONFIGS -> configs(INCREMENTAL_ALTER_CONFIGS, AclOperation.ALTER_CONFIGS, forwarded);
            // Kafka checks quotas as cluster configs.
            case DESCRIBE_CLIENT_QUOTAS -> access.requireCluster(AclOperation.DESCRIBE_CONFIGS, forwarded);
            case ALTER_CLIENT_QUOTAS -> access.requireCluster(AclOperation.ALTER_CONFIGS, forwarded);
            default -> throw new IllegalStateException("the gateway has no access rule for " + api
                    + ": it must not be forwarded unchecked");
        };
    }

    private ApiHandler readGroup(Function<ApiRequest, String> groupId, ApiHandler next) {
        return access.requireGroup(AclOperation.READ, groupId, next);
    }

    // ---- cutting a request by the resources it names ------------------------------------------

    /** A partition API: {@code op} on each partition's topic, TOPIC_AUTHORIZATION_FAILED where refused. */
    private <Q extends ApiMessage, R extends ApiMessage> ApiHandler partitions(PartitionForwarding.Shape<Q, R> shape,
            AclOperation op, ApiHandler next) {
        return topics(items(shape), op, next, null);
    }

    /** A partition API's forwarding shape, as the items one check is about. */
    private static <Q extends ApiMessage, R extends ApiMessage> Items<Q, R, PartitionRef> items(
            PartitionForwarding.Shape<Q, R> shape) {
        return new Items<>() {
            @Override
            public List<PartitionRef> keys(Q request) {
                return shape.partitions(request);
            }

            @Override
            public void retain(Q copy, Predicate<PartitionRef> keep) {
                shape.retain(copy, keep);
            }

            @Override
            public void join(R into, R part) {
                shape.join(into, part);
            }
        };
    }

    /**
     * {@code op} on the topic of each partition: the names as given, ids as the upstream's metadata
     * resolves them (read again once if one is unknown; still unknown, UNKNOWN_TOPIC_ID).
     */
    private <Q extends ApiMessage, R extends ApiMessage> ApiHandler topics(Items<Q, R, PartitionRef> items,
            AclOperation op, ApiHandler next, Function<Q, R> refusal) {
        return request -> resolved(request, items, op, refusal, next);
    }

    @SuppressWarnings("unchecked")
    private <Q extends ApiMessage, R extends ApiMessage> CompletableFuture<AbstractResponse> resolved(
            ApiRequest request, Items<Q, R, PartitionRef> items, AclOperation op, Function<Q, R> refusal,
            ApiHandler next) {
        Q data = (Q) request.body().data();
        boolean unresolved = items.keys(data).stream().anyMatch(ref -> topicName(ref) == null);
        CompletableFuture<?> ready = unresolved ? upstream.refresh().handle((v, f) -> null)
                : CompletableFuture.completedFuture(null);
        return ready.thenCompose(v -> {
            Map<String, Boolean> allowed = new HashMap<>();
            return cut(request, items, ref -> {
                String name = topicName(ref);
                if (name == null) {
                    return Errors.UNKNOWN_TOPIC_ID; // as Kafka: retriable, and names nothing it could leak
                }
                return allowed.computeIfAbsent(name, n -> access.topic(request, op, n))
                        ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED;
            }, refusal, next);
        });
    }

    private String topicName(PartitionRef ref) {
        return topicName(ref.name(), ref.id());
    }

    /** A topic as a request or answer names it: by {@code name} if given, else by {@code id} in the metadata. */
    private String topicName(String name, Uuid id) {
        return name != null && !name.isEmpty() ? name : upstream.view().name(id);
    }

    /** A batched group or transactional-id API: {@code op} on each key, {@code error} where refused. */
    private <Q extends ApiMessage, R extends ApiMessage> ApiHandler keyed(KeyedForwarding.Shape<Q, R> shape,
            ResourceType type, AclOperation op, Errors error, java.util.function.BiConsumer<ApiRequest, R> trim,
            ApiHandler next) {
        Items<Q, R, String> items = new Items<>() {
            @Override
            public List<String> keys(Q request) {
                return shape.keys(request);
            }

            @Override
            public void retain(Q copy, Predicate<String> keep) {
                shape.retain(copy, keep);
            }

            @Override
            public void join(R into, R part) {
                shape.join(into, part);
            }
        };
        ApiHandler checked = request -> cut(request, items,
                key -> access.on(request, op, type, key) ? Errors.NONE : error, null, next);
        return trim == null ? checked : trimmed(checked, trim);
    }

    /**
     * Forwards the part of the request {@code denied} lets through (NONE) and answers each refused
     * part with its error: by {@code refusal} when given, else with the request's own error
     * response; the answers are joined. Nothing refused: the request goes on as it is.
     */
    @SuppressWarnings("unchecked")
    private static <Q extends ApiMessage, R extends ApiMessage, K> CompletableFuture<AbstractResponse> cut(
            ApiRequest request, Items<Q, R, K> items, Function<K, Errors> denied, Function<Q, R> refusal,
            ApiHandler next) {
        AbstractRequest body = request.body();
        Q data = (Q) body.data();
        Map<K, Errors> verdicts = new HashMap<>();
        Map<Errors, List<K>> refused = new LinkedHashMap<>();
        boolean someAllowed = false;
        for (K key : items.keys(data)) {
            Errors e = verdicts.computeIfAbsent(key, denied);
            if (e == Errors.NONE) {
                someAllowed = true;
            } else {
                refused.computeIfAbsent(e, x -> new ArrayList<>()).add(key);
            }
        }
        if (refused.isEmpty()) {
            return next.handle(request);
        }
        short version = request.version();
        List<AbstractResponse> answers = new ArrayList<>();
        for (Map.Entry<Errors, List<K>> r : refused.entrySet()) {
            Q copy = (Q) data.duplicate();
            List<K> keys = r.getValue();
            items.retain(copy, keys::contains);
            answers.add(refusal != null ? Messages.response(body.apiKey(), refusal.apply(copy), version)
                    : Messages.request(body.apiKey(), copy, version).getErrorResponse(0, r.getKey().exception()));
        }
        if (!someAllowed) {
            return CompletableFuture.completedFuture(Messages.joined(body.apiKey(), version, answers, items::join));
        }
        Q allowed = (Q) data.duplicate();
        items.retain(allowed, key -> verdicts.get(key) == Errors.NONE);
        ApiRequest part = new ApiRequest(request.header(), Messages.request(body.apiKey(), allowed, version),
                request.connection());
        return next.handle(part).thenApply(answer -> {
            if (answer == null) {
                return null; // Produce with acks=0: the refused batches are dropped, as nothing is answered
            }
            List<AbstractResponse> all = new ArrayList<>();
            all.add(answer);
            all.addAll(answers);
            return Messages.joined(body.apiKey(), version, all, items::join);
        });
    }

    // ---- reads trimmed after the upstream answered --------------------------------------------

    @SuppressWarnings("unchecked")
    private static <R extends ApiMessage> ApiHandler trimmed(ApiHandler next,
            java.util.function.BiConsumer<ApiRequest, R> trim) {
        return request -> next.handle(request).thenApply(answer -> {
            if (answer == null) {
                return null;
            }
            trim.accept(request, (R) answer.data());
            return Messages.response(request.body().apiKey(), answer.data(), request.version());
        });
    }

    private void listedGroups(ApiRequest request, ListGroupsResponseData answer) {
        if (!access.cluster(request, AclOperation.DESCRIBE)) {
            answer.groups().removeIf(g -> !access.group(request, AclOperation.DESCRIBE, g.groupId()));
        }
    }

    private void listedTransactions(ApiRequest request, ListTransactionsResponseData answer) {
        answer.transactionStates().removeIf(t ->
                !access.transactionalId(request, AclOperation.DESCRIBE, t.transactionalId()));
    }

    private void describedTransactions(ApiRequest request, DescribeTransactionsResponseData answer) {
        for (DescribeTransactionsResponseData.TransactionState t : answer.transactionStates()) {
            DescribeTransactionsResponseData.TopicDataCollection kept =
                    new DescribeTransactionsResponseData.TopicDataCollection();
            t.topics().forEach(d -> {
                if (access.topic(request, AclOperation.DESCRIBE, d.topic())) {
                    kept.add(d.duplicate());
                }
            });
            t.setTopics(kept);
        }
    }

    private void describedGroups(ApiRequest request, DescribeGroupsResponseData answer) {
        answer.groups().forEach(g -> {
            if (g.authorizedOperations() != Access.OPERATIONS_OMITTED) {
                g.setAuthorizedOperations(access.operations(request, ResourceType.GROUP, g.groupId()));
            }
        });
    }

    /** As Kafka: a group whose members hold a topic the principal may not describe is not described. */
    private void describedConsumerGroups(ApiRequest request, ConsumerGroupDescribeResponseData answer) {
        for (ConsumerGroupDescribeResponseData.DescribedGroup g : answer.groups()) {
            if (g.errorCode() != Errors.NONE.code()) {
                continue;
            }
            List<String> topics = new ArrayList<>();
            g.members().forEach(m -> {
                topics.addAll(m.subscribedTopicNames());
                m.assignment().topicPartitions().forEach(t -> topics.add(t.topicName()));
                m.targetAssignment().topicPartitions().forEach(t -> topics.add(t.topicName()));
            });
            if (!access.mayDescribeAll(request, topics.stream())) {
                g.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("The group has members holding topics the principal may not describe")
                        .setMembers(new ArrayList<>());
            } else if (g.authorizedOperations() != Access.OPERATIONS_OMITTED) {
                g.setAuthorizedOperations(access.operations(request, ResourceType.GROUP, g.groupId()));
            }
        }
    }

    // ---- the APIs with rules of their own -----------------------------------------------------

    /**
     * Metadata as the broker answers it: a named topic the principal may not DESCRIBE is
     * TOPIC_AUTHORIZATION_FAILED whether it exists or not, auto-creation needs CREATE (on the cluster
     * or the topic), the list of all topics leaves out what it may not see, and authorized
     * operations are the principal's. When only some of the named topics may be created, none is
     * created by this request; the others are answered as unknown, and the client asks again.
     */
    private CompletableFuture<AbstractResponse> metadata(ApiRequest request, ApiHandler next) {
        MetadataRequest body = request.bodyAs(MetadataRequest.class);
        MetadataRequestData in = body.data();
        List<MetadataResponseData.MetadataResponseTopic> refused = new ArrayList<>();
        List<String> mayNotCreate = new ArrayList<>();
        ApiRequest forwarded = request;
        boolean autoCreate = request.version() < 4 || in.allowAutoTopicCreation();
        if (!body.isAllTopics()) {
            MetadataRequestData copy = in.duplicate();
            copy.topics().removeIf(t -> {
                boolean byId = t.topicId() != null && !Uuid.ZERO_UUID.equals(t.topicId());
                String name = byId ? upstream.view().name(t.topicId()) : t.name();
                if (name == null) {
                    return false; // an id the upstream will answer as unknown
                }
                if (!access.topic(request, AclOperation.DESCRIBE, name)) {
                    refused.add(new MetadataResponseData.MetadataResponseTopic().setName(byId ? null : name)
                            .setTopicId(byId ? t.topicId() : Uuid.ZERO_UUID)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    return true;
                }
                if (!access.mayCreateTopic(request, name)) {
                    mayNotCreate.add(name);
                }
                return false;
            });
            if (autoCreate && !mayNotCreate.isEmpty()) {
                if (request.version() < 4) {
                    // No way to ask without creating: those topics are refused at once.
                    copy.topics().removeIf(t -> mayNotCreate.contains(t.name()));
                    mayNotCreate.forEach(n -> refused.add(new MetadataResponseData.MetadataResponseTopic().setName(n)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
                } else {
                    copy.setAllowAutoTopicCreation(false);
                }
            }
            if (copy.topics().size() != in.topics().size() || copy.allowAutoTopicCreation() != in.allowAutoTopicCreation()) {
                forwarded = new ApiRequest(request.header(), Messages.request(ApiKeys.METADATA, copy, request.version()),
                        request.connection());
            }
        }
        return next.handle(forwarded).thenApply(answer -> {
            MetadataResponseData data = (MetadataResponseData) answer.data();
            if (body.isAllTopics()) {
                data.topics().removeIf(t -> !access.topic(request, AclOperation.DESCRIBE, t.name()));
            }
            for (MetadataResponseData.MetadataResponseTopic t : data.topics()) {
                if (autoCreate && mayNotCreate.contains(t.name())
                        && t.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()) {
                    t.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
                }
                if (t.topicAuthorizedOperations() != Access.OPERATIONS_OMITTED && t.name() != null) {
                    t.setTopicAuthorizedOperations(access.operations(request, ResourceType.TOPIC, t.name()));
                }
            }
            refused.forEach(t -> data.topics().add(t));
            if (data.clusterAuthorizedOperations() != Access.OPERATIONS_OMITTED) {
                data.setClusterAuthorizedOperations(access.clusterOperations(request));
            }
            return Messages.response(ApiKeys.METADATA, data, request.version());
        });
    }

    /**
     * Fetch: READ on each partition's topic, TOPIC_AUTHORIZATION_FAILED per partition where refused
     * (the request's own error response would carry one top-level error from v13). A replica
     * fetch is refused whole: the gateway's clients are no followers (CVE-2018-1288).
     */
    private ApiHandler fetch(ApiHandler next) {
        ApiHandler checked = topics(items(PartitionShapes.FETCH), AclOperation.READ, next, GatewayAccess::fetchRefused);
        return request -> {
            FetchRequestData in = request.bodyAs(FetchRequest.class).data();
            if (in.replicaId() >= 0 || (in.replicaState() != null && in.replicaState().replicaId() >= 0)) {
                return CompletableFuture.completedFuture(Messages.response(ApiKeys.FETCH,
                        new FetchResponseData().setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code()),
                        request.version()));
            }
            return checked.handle(request);
        };
    }

    private static FetchResponseData fetchRefused(FetchRequestData refused) {
        FetchResponseData out = new FetchResponseData();
        for (FetchRequestData.FetchTopic t : refused.topics()) {
            FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                    .setTopic(t.topic()).setTopicId(t.topicId());
            t.partitions().forEach(p -> topic.partitions().add(new FetchResponseData.PartitionData()
                    .setPartitionIndex(p.partition()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                    .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
                    .setRecords(MemoryRecords.EMPTY)));
            out.responses().add(topic);
        }
        return out;
    }

    /**
     * OffsetFetch: DESCRIBE on each group (refused whole before v8, per group from v8), and each
     * topic's offsets only with DESCRIBE on it: named, TOPIC_AUTHORIZATION_FAILED; asked for all,
     * left out.
     */
    private ApiHandler offsetFetch(ApiHandler next) {
        ApiHandler batched = keyed(KeyShapes.OFFSET_FETCH, ResourceType.GROUP, AclOperation.DESCRIBE,
                Errors.GROUP_AUTHORIZATION_FAILED, this::fetchedOffsets, namedOffsets(next));
        ApiHandler single = access.requireGroup(AclOperation.DESCRIBE,
                r -> r.bodyAs(OffsetFetchRequest.class).data().groupId(), trimmed(next, this::fetchedOffsets));
        return request -> request.version() < 8 ? single.handle(request) : batched.handle(request);
    }

    /**
     * Before {@link #fetchedOffsets} trims an answer that names topics by id (v10, the KIP-848
     * consumer), every id must have a name: one the metadata does not know yet, a topic created a
     * moment ago, is read again once.
     */
    private ApiHandler namedOffsets(ApiHandler next) {
        return request -> next.handle(request).thenCompose(answer -> {
            boolean unknown = answer != null && ((OffsetFetchResponseData) answer.data()).groups().stream()
                    .flatMap(g -> g.topics().stream()).anyMatch(t -> offsetTopicName(t) == null);
            return unknown ? upstream.refresh().handle((v, f) -> answer) : CompletableFuture.completedFuture(answer);
        });
    }

    private String offsetTopicName(OffsetFetchResponseData.OffsetFetchResponseTopics t) {
        return topicName(t.name(), t.topicId());
    }

    private void fetchedOffsets(ApiRequest request, OffsetFetchResponseData answer) {
        OffsetFetchRequestData in = request.bodyAs(OffsetFetchRequest.class).data();
        short refusedCode = Errors.TOPIC_AUTHORIZATION_FAILED.code();
        if (request.version() < 8) {
            boolean named = in.topics() != null;
            answer.topics().removeIf(t -> !named && !access.topic(request, AclOperation.DESCRIBE, t.name()));
            answer.topics().forEach(t -> {
                if (!access.topic(request, AclOperation.DESCRIBE, t.name())) {
                    t.partitions().forEach(p -> p.setErrorCode(refusedCode).setCommittedOffset(-1).setMetadata(""));
                }
            });
            return;
        }
        Map<String, Boolean> named = new HashMap<>();
        in.groups().forEach(g -> named.put(g.groupId(), g.topics() != null));
        for (OffsetFetchResponseData.OffsetFetchResponseGroup g : answer.groups()) {
            boolean listed = named.getOrDefault(g.groupId(), false);
            g.topics().removeIf(t -> {
                String name = offsetTopicName(t);
                boolean may = name != null && access.topic(request, AclOperation.DESCRIBE, name);
                if (!may && listed) {
                    // an id still without a name after namedOffsets read the metadata again: retriable
                    short code = name == null ? Errors.UNKNOWN_TOPIC_ID.code() : refusedCode;
                    t.partitions().forEach(p -> p.setErrorCode(code).setCommittedOffset(-1).setMetadata(""));
                }
                return !may && !listed;
            });
        }
    }

    /** AddPartitionsToTxn (v3 and below, what clients send): as Kafka, all or nothing. */
    private ApiHandler addPartitionsToTxn(ApiHandler next) {
        return request -> {
            AddPartitionsToTxnRequestData in = request.bodyAs(AddPartitionsToTxnRequest.class).data();
            Map<org.apache.kafka.common.TopicPartition, Errors> each = new LinkedHashMap<>();
            boolean refused = false;
            for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic t : in.v3AndBelowTopics()) {
                boolean may = access.topic(request, AclOperation.WRITE, t.name());
                refused |= !may;
                t.partitions().forEach(p -> each.put(new org.apache.kafka.common.TopicPartition(t.name(), p),
                        may ? Errors.OPERATION_NOT_ATTEMPTED : Errors.TOPIC_AUTHORIZATION_FAILED));
            }
            if (!refused) {
                return next.handle(request);
            }
            return CompletableFuture.completedFuture(new AddPartitionsToTxnResponse(
                    new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(
                            AddPartitionsToTxnResponse.resultForTransaction(
                                    AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, each).topicResults())));
        };
    }

    /** Config resources: {@code op} on the topic, the group, or for broker configs the cluster. */
    private <Q extends ApiMessage, R extends ApiMessage> ApiHandler configs(Items<Q, R, Resource> items,
            AclOperation op, ApiHandler next) {
        return request -> cut(request, items, r -> switch (ConfigResource.Type.forId(r.type())) {
            case TOPIC -> access.topic(request, op, r.name()) ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED;
            case GROUP -> access.group(request, op, r.name()) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
            default -> access.cluster(request, op) ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED;
        }, null, next);
    }

    private static OffsetDeleteResponseData offsetDeleteRefused(OffsetDeleteRequestData refused) {
        OffsetDeleteResponseData out = new OffsetDeleteResponseData();
        refused.topics().forEach(t -> {
            OffsetDeleteResponseData.OffsetDeleteResponseTopic topic =
                    new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(t.name());
            t.partitions().forEach(p -> topic.partitions().add(new OffsetDeleteResponseData.OffsetDeleteResponsePartition()
                    .setPartitionIndex(p.partitionIndex()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
            out.topics().add(topic);
        });
        return out;
    }

    // ---- where each request names its resources ------------------------------------------------

    private static final Items<OffsetCommitRequestData, OffsetCommitResponseData, PartitionRef> OFFSET_COMMIT =
            new Items<>() {
        @Override
        public List<PartitionRef> keys(OffsetCommitRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.name(), t.topicId(), p.partitionIndex()))));
            return out;
        }

        @Override
        public void retain(OffsetCommitRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitions().removeIf(p ->
                    !keep.test(new PartitionRef(t.name(), t.topicId(), p.partitionIndex()))));
            copy.topics().removeIf(t -> t.partitions().isEmpty());
        }

        @Override
        public void join(OffsetCommitResponseData into, OffsetCommitResponseData part) {
            into.topics().addAll(part.topics());
        }
    };

    private static final Items<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData, PartitionRef>
            TXN_OFFSET_COMMIT = new Items<>() {
        @Override
        public List<PartitionRef> keys(TxnOffsetCommitRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.name(), null, p.partitionIndex()))));
            return out;
        }

        @Override
        public void retain(TxnOffsetCommitRequestData copy, Predicate<PartitionRef> keep) {
            copy.topics().forEach(t -> t.partitions().removeIf(p ->
                    !keep.test(new PartitionRef(t.name(), null, p.partitionIndex()))));
            copy.topics().removeIf(t -> t.partitions().isEmpty());
        }

        @Override
        public void join(TxnOffsetCommitResponseData into, TxnOffsetCommitResponseData part) {
            into.topics().addAll(part.topics());
        }
    };

    private static final Items<OffsetDeleteRequestData, OffsetDeleteResponseData, PartitionRef> OFFSET_DELETE =
            new Items<>() {
        @Override
        public List<PartitionRef> keys(OffsetDeleteRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topics().forEach(t -> t.partitions().forEach(p ->
                    out.add(new PartitionRef(t.name(), null, p.partitionIndex()))));
            return out;
        }

        @Override
        public void retain(OffsetDeleteRequestData copy, Predicate<PartitionRef> keep) {
            OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection kept =
                    new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
            for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : copy.topics()) {
                t.partitions().removeIf(p -> !keep.test(new PartitionRef(t.name(), null, p.partitionIndex())));
                if (!t.partitions().isEmpty()) {
                    kept.add(t.duplicate());
                }
            }
            copy.setTopics(kept);
        }

        @Override
        public void join(OffsetDeleteResponseData into, OffsetDeleteResponseData part) {
            part.topics().forEach(t -> into.topics().add(t.duplicate()));
        }
    };

    private static final Items<CreateTopicsRequestData, CreateTopicsResponseData, String> CREATE_TOPICS =
            new Items<>() {
        @Override
        public List<String> keys(CreateTopicsRequestData request) {
            List<String> out = new ArrayList<>();
            request.topics().forEach(t -> out.add(t.name()));
            return out;
        }

        @Override
        public void retain(CreateTopicsRequestData copy, Predicate<String> keep) {
            CreateTopicsRequestData.CreatableTopicCollection kept = new CreateTopicsRequestData.CreatableTopicCollection();
            copy.topics().forEach(t -> {
                if (keep.test(t.name())) {
                    kept.add(t.duplicate());
                }
            });
            copy.setTopics(kept);
        }

        @Override
        public void join(CreateTopicsResponseData into, CreateTopicsResponseData part) {
            part.topics().forEach(t -> into.topics().add(t.duplicate()));
        }
    };

    /** DeleteTopics names topics by name (v5 and below, and v6+ without ids) or by id (v6+). */
    private static final Items<DeleteTopicsRequestData, DeleteTopicsResponseData, PartitionRef> DELETE_TOPICS =
            new Items<>() {
        @Override
        public List<PartitionRef> keys(DeleteTopicsRequestData request) {
            List<PartitionRef> out = new ArrayList<>();
            request.topicNames().forEach(n -> out.add(new PartitionRef(n, null, 0)));
            request.topics().forEach(t -> out.add(new PartitionRef(t.name(), t.topicId(), 0)));
            return out;
        }

        @Override
        public void retain(DeleteTopicsRequestData copy, Predicate<PartitionRef> keep) {
            copy.topicNames().removeIf(n -> !keep.test(new PartitionRef(n, null, 0)));
            copy.topics().removeIf(t -> !keep.test(new PartitionRef(t.name(), t.topicId(), 0)));
        }

        @Override
        public void join(DeleteTopicsResponseData into, DeleteTopicsResponseData part) {
            part.responses().forEach(t -> into.responses().add(t.duplicate()));
        }
    };

    private static final Items<CreatePartitionsRequestData, CreatePartitionsResponseData, String> CREATE_PARTITIONS =
            new Items<>() {
        @Override
        public List<String> keys(CreatePartitionsRequestData request) {
            List<String> out = new ArrayList<>();
            request.topics().forEach(t -> out.add(t.name()));
            return out;
        }

        @Override
        public void retain(CreatePartitionsRequestData copy, Predicate<String> keep) {
            CreatePartitionsRequestData.CreatePartitionsTopicCollection kept =
                    new CreatePartitionsRequestData.CreatePartitionsTopicCollection();
            copy.topics().forEach(t -> {
                if (keep.test(t.name())) {
                    kept.add(t.duplicate());
                }
            });
            copy.setTopics(kept);
        }

        @Override
        public void join(CreatePartitionsResponseData into, CreatePartitionsResponseData part) {
            into.results().addAll(part.results());
        }
    };

    private static final Items<DescribeConfigsRequestData, DescribeConfigsResponseData, Resource> DESCRIBE_CONFIGS =
            new Items<>() {
        @Override
        public List<Resource> keys(DescribeConfigsRequestData request) {
            List<Resource> out = new ArrayList<>();
            request.resources().forEach(r -> out.add(new Resource(r.resourceType(), r.resourceName())));
            return out;
        }

        @Override
        public void retain(DescribeConfigsRequestData copy, Predicate<Resource> keep) {
            copy.resources().removeIf(r -> !keep.test(new Resource(r.resourceType(), r.resourceName())));
        }

        @Override
        public void join(DescribeConfigsResponseData into, DescribeConfigsResponseData part) {
            into.results().addAll(part.results());
        }
    };

    private static final Items<AlterConfigsRequestData, AlterConfigsResponseData, Resource> ALTER_CONFIGS =
            new Items<>() {
        @Override
        public List<Resource> keys(AlterConfigsRequestData request) {
            List<Resource> out = new ArrayList<>();
            request.resources().forEach(r -> out.add(new Resource(r.resourceType(), r.resourceName())));
            return out;
        }

        @Override
        public void retain(AlterConfigsRequestData copy, Predicate<Resource> keep) {
            AlterConfigsRequestData.AlterConfigsResourceCollection kept =
                    new AlterConfigsRequestData.AlterConfigsResourceCollection();
            copy.resources().forEach(r -> {
                if (keep.test(new Resource(r.resourceType(), r.resourceName()))) {
                    kept.add(r.duplicate());
                }
            });
            copy.setResources(kept);
        }

        @Override
        public void join(AlterConfigsResponseData into, AlterConfigsResponseData part) {
            into.responses().addAll(part.responses());
        }
    };

    private static final Items<IncrementalAlterConfigsRequestData, IncrementalAlterConfigsResponseData, Resource>
            INCREMENTAL_ALTER_CONFIGS = new Items<>() {
        @Override
        public List<Resource> keys(IncrementalAlterConfigsRequestData request) {
            List<Resource> out = new ArrayList<>();
            request.resources().forEach(r -> out.add(new Resource(r.resourceType(), r.resourceName())));
            return out;
        }

        @Override
        public void retain(IncrementalAlterConfigsRequestData copy, Predicate<Resource> keep) {
            IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection kept =
                    new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
            copy.resources().forEach(r -> {
                if (keep.test(new Resource(r.resourceType(), r.resourceName()))) {
                    kept.add(r.duplicate());
                }
            });
            copy.setResources(kept);
        }

        @Override
        public void join(IncrementalAlterConfigsResponseData into, IncrementalAlterConfigsResponseData part) {
            into.responses().addAll(part.responses());
        }
    };
}
