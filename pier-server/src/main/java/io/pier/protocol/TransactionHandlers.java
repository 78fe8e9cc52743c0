package io.pier.protocol;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.pier.service.Futures;
import io.pier.service.TransactionCoordinators;
import io.pier.txn.TransactionDescription;
import io.pier.txn.TransactionFilter;
import io.pier.txn.TransactionListing;
import io.pier.txn.TransactionState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;

/**
 * The transaction coordinator's APIs: InitProducerId (transactional), AddPartitionsToTxn (v0-3
 * from clients, the batched v4-5 shape), AddOffsetsToTxn, EndTxn, DescribeTransactions and
 * ListTransactions, answered by the {@link TransactionCoordinators} of the shards.
 *
 * <p>The coordinator answers PRODUCER_FENCED; clients older than KIP-588's versions
 * (InitProducerId v4, AddPartitionsToTxn / AddOffsetsToTxn / EndTxn v2) only know
 * INVALID_PRODUCER_EPOCH, as Kafka's KafkaApis maps it.
 */
public final class TransactionHandlers {
    /** EndTxn v5+ is KIP-890's transaction version 2 (the epoch bumped by every EndTxn). */
    static final short FIRST_TV2_END_TXN_VERSION = 5;
    private static final short FIRST_BATCHED_ADD_PARTITIONS_VERSION = 4;

    private final TransactionCoordinators coordinators;

    private final Access access;

    public TransactionHandlers(TransactionCoordinators coordinators, Access access) {
        this.coordinators = coordinators;
        this.access = access;
    }

    /** InitProducerId with a transactional id (the idempotent case stays with InitProducerIdHandler). */
    public CompletableFuture<AbstractResponse> initProducerId(ApiRequest request) {
        var in = request.bodyAs(InitProducerIdRequest.class).data();
        short version = request.version();
        return coordinators.initProducerId(in.transactionalId(), in.transactionTimeoutMs(), in.producerId(),
                in.producerEpoch()).thenApply(r -> new InitProducerIdResponse(new InitProducerIdResponseData()
                        .setErrorCode(fenced(r.error(), version, (short) 4).code())
                        .setProducerId(r.producerId()).setProducerEpoch(r.producerEpoch())));
    }

    public CompletableFuture<AbstractResponse> addPartitionsToTxn(ApiRequest request) {
        AddPartitionsToTxnRequestData in = request.bodyAs(AddPartitionsToTxnRequest.class).data();
        short version = request.version();
        if (version < FIRST_BATCHED_ADD_PARTITIONS_VERSION) {
            List<TopicPartition> partitions = partitionsOf(in.v3AndBelowTopics());
            // As Kafka: if any topic lacks WRITE, nothing is added; those partitions say why, the
            // others OPERATION_NOT_ATTEMPTED.
            if (partitions.stream().anyMatch(tp -> !access.topic(request, AclOperation.WRITE, tp.topic()))) {
                Map<TopicPartition, Errors> each = new LinkedHashMap<>();
                partitions.forEach(tp -> each.put(tp, access.topic(request, AclOperation.WRITE, tp.topic())
                        ? Errors.OPERATION_NOT_ATTEMPTED : Errors.TOPIC_AUTHORIZATION_FAILED));
                return CompletableFuture.completedFuture(new AddPartitionsToTxnResponse(
                        new AddPartitionsToTxnResponseData().setResultsByTopicV3AndBelow(
                                AddPartitionsToTxnResponse.resultForTransaction(
                                        AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, each).topicResults())));
            }
            return coordinators.addPartitions(in.v3AndBelowTransactionalId(), in.v3AndBelowProducerId(),
                    in.v3AndBelowProducerEpoch(), partitions).thenApply(error -> {
                        Errors e = fenced(error, version, (short) 2);
                        Map<TopicPartition, Errors> each = new LinkedHashMap<>();
                        partitions.forEach(tp -> each.put(tp, e));
                        return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData()
                                .setResultsByTopicV3AndBelow(AddPartitionsToTxnResponse.resultForTransaction(
                                        AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, each).topicResults()));
                    });
        }
        List<CompletableFuture<AddPartitionsToTxnResponseData.AddPartitionsToTxnResult>> each = new ArrayList<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction t : in.transactions()) {
            each.add(batchedTransaction(t));
        }
        return Futures.all(each).thenApply(results -> {
            AddPartitionsToTxnResponseData out = new AddPartitionsToTxnResponseData();
            results.forEach(r -> out.resultsByTransaction().add(r));
            return new AddPartitionsToTxnResponse(out);
        });
    }

    /** v4+: one transaction of the batch, verified partition by partition or added at once. */
    private CompletableFuture<AddPartitionsToTxnResponseData.AddPartitionsToTxnResult> batchedTransaction(
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction t) {
        List<TopicPartition> partitions = partitionsOf(t.topics());
        if (!t.verifyOnly()) {
            return coordinators.addPartitions(t.transactionalId(), t.producerId(), t.producerEpoch(), partitions)
                    .thenApply(error -> {
                        Map<TopicPartition, Errors> each = new LinkedHashMap<>();
                        partitions.forEach(tp -> each.put(tp, error));
                        return AddPartitionsToTxnResponse.resultForTransaction(t.transactionalId(), each);
                    });
        }
        List<CompletableFuture<Errors>> checks = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            checks.add(coordinators.verifyPartition(t.transactionalId(), t.producerId(), t.producerEpoch(), tp));
        }
        return Futures.all(checks).thenApply(errors -> {
            Map<TopicPartition, Errors> each = new LinkedHashMap<>();
            for (int i = 0; i < partitions.size(); i++) {
                each.put(partitions.get(i), errors.get(i));
            }
            return AddPartitionsToTxnResponse.resultForTransaction(t.transactionalId(), each);
        });
    }

    private static List<TopicPartition> partitionsOf(
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics) {
        List<TopicPartition> out = new ArrayList<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic topic : topics) {
            for (int p : topic.partitions()) {
                out.add(new TopicPartition(topic.name(), p));
            }
        }
        return out;
    }

    public CompletableFuture<AbstractResponse> addOffsetsToTxn(ApiRequest request) {
        var in = request.bodyAs(AddOffsetsToTxnRequest.class).data();
        short version = request.version();
        return coordinators.addOffsets(in.transactionalId(), in.producerId(), in.producerEpoch(), in.groupId())
                .thenApply(error -> new AddOffsetsToTxnResponse(new AddOffsetsToTxnResponseData()
                        .setErrorCode(fenced(error, version, (short) 2).code())));
    }

    public CompletableFuture<AbstractResponse> endTxn(ApiRequest request) {
        var in = request.bodyAs(EndTxnRequest.class).data();
        short version = request.version();
        return coordinators.endTxn(in.transactionalId(), in.producerId(), in.producerEpoch(), in.committed(),
                version >= FIRST_TV2_END_TXN_VERSION).thenApply(r -> new EndTxnResponse(new EndTxnResponseData()
                        .setErrorCode(fenced(r.error(), version, (short) 2).code())
                        .setProducerId(r.producerId()).setProducerEpoch(r.producerEpoch())));
    }

    public CompletableFuture<AbstractResponse> describeTransactions(ApiRequest request) {
        List<String> ids = request.bodyAs(DescribeTransactionsRequest.class).data().transactionalIds();
        List<CompletableFuture<DescribeTransactionsResponseData.TransactionState>> each = new ArrayList<>();
        for (String id : ids) {
            if (!access.transactionalId(request, AclOperation.DESCRIBE, id)) {
                each.add(CompletableFuture.completedFuture(new DescribeTransactionsResponseData.TransactionState()
                        .setTransactionalId(id).setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())));
                continue;
            }
            each.add(coordinators.describe(id).thenApply(d -> d.map(t -> described(t, access.topics(request,
                    AclOperation.DESCRIBE)))
                    .orElseGet(() -> new DescribeTransactionsResponseData.TransactionState().setTransactionalId(id)
                            .setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code()))));
        }
        return Futures.all(each).thenApply(states -> new DescribeTransactionsResponse(
                new DescribeTransactionsResponseData().setTransactionStates(states)));
    }

    /**
     * Kafka lists a group as its __consumer_offsets partition; Pier has no such topic and lists
     * topics only. As Kafka, topics the principal may not describe are left out.
     */
    private static DescribeTransactionsResponseData.TransactionState described(TransactionDescription d,
            Predicate<String> describable) {
        DescribeTransactionsResponseData.TransactionState s = new DescribeTransactionsResponseData.TransactionState()
                .setTransactionalId(d.transactionalId()).setTransactionState(d.state().kafkaName())
                .setTransactionTimeoutMs(d.timeoutMs()).setTransactionStartTimeMs(d.startTimestampMs())
                .setProducerId(d.producerId()).setProducerEpoch(d.producerEpoch());
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        d.partitions().stream().filter(tp -> describable.test(tp.topic()))
                .forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        byTopic.forEach((topic, partitions) -> s.topics().add(new DescribeTransactionsResponseData.TopicData()
                .setTopic(topic).setPartitions(partitions.stream().sorted().toList())));
        return s;
    }

    public CompletableFuture<AbstractResponse> listTransactions(ApiRequest request) {
        ListTransactionsRequestData in = request.bodyAs(ListTransactionsRequest.class).data();
        ListTransactionsResponseData out = new ListTransactionsResponseData();
        Set<TransactionState> states = new HashSet<>();
        for (String name : in.stateFilters()) {
            Optional<TransactionState> s = byKafkaName(name);
            if (s.isPresent()) {
                states.add(s.get());
            } else {
                out.unknownStateFilters().add(name);
            }
        }
        // Only unknown states asked for: nothing can match (an empty set would match everything).
        if (!in.stateFilters().isEmpty() && states.isEmpty()) {
            return CompletableFuture.completedFuture(new ListTransactionsResponse(out));
        }
        // RE2/J, as Kafka: linear time whatever pattern a client sends.
        Pattern idPattern;
        try {
            idPattern = in.transactionalIdPattern() == null || in.transactionalIdPattern().isEmpty() ? null
                    : Pattern.compile(in.transactionalIdPattern());
        } catch (PatternSyntaxException e) {
            return CompletableFuture.completedFuture(new ListTransactionsResponse(
                    out.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code())));
        }
        TransactionFilter filter = new TransactionFilter(states, Set.copyOf(in.producerIdFilters()),
                in.durationFilter());
        return coordinators.list(filter).thenApply(listed -> {
            for (TransactionListing l : listed) {
                if ((idPattern == null || idPattern.matcher(l.transactionalId()).matches())
                        && access.transactionalId(request, AclOperation.DESCRIBE, l.transactionalId())) {
                    out.transactionStates().add(new ListTransactionsResponseData.TransactionState()
                            .setTransactionalId(l.transactionalId()).setProducerId(l.producerId())
                            .setTransactionState(l.state().kafkaName()));
                }
            }
            return new ListTransactionsResponse(out);
        });
    }

    private static Optional<TransactionState> byKafkaName(String name) {
        for (TransactionState s : TransactionState.values()) {
            if (s.kafkaName().equals(name)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }

    /** PRODUCER_FENCED for clients that know it (from {@code firstVersion}), INVALID_PRODUCER_EPOCH before. */
    static Errors fenced(Errors error, short version, short firstVersion) {
        return error == Errors.PRODUCER_FENCED && version < firstVersion ? Errors.INVALID_PRODUCER_EPOCH : error;
    }
}
