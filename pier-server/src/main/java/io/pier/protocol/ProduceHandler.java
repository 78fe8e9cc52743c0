package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.Logs;
import io.pier.service.TopicService;
import io.pier.service.TransactionCoordinators;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

/**
 * Produce: each partition's batch is appended on its shard and answered only after the shard's
 * group-commit flush has made it durable (in {@code durable} mode), whatever {@code acks} asked
 * for beyond 0: on one node, acks=1 and acks=all mean the same.
 */
public final class ProduceHandler implements ApiHandler {
    /** From v12 a transactional batch joins its transaction (KIP-890 part 2, transaction version 2). */
    static final short FIRST_TV2_VERSION = 12;

    private final TopicService topics;
    private final Logs logs;
    private final TransactionCoordinators transactions;

    private final Access access;

    public ProduceHandler(TopicService topics, Logs logs, TransactionCoordinators transactions, Access access) {
        this.access = access;
        this.topics = topics;
        this.logs = logs;
        this.transactions = transactions;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ProduceRequest body = request.bodyAs(ProduceRequest.class);
        short acks = body.acks();
        boolean byId = request.version() >= 13;
        // CVE-2018-17196: a transactional producer needs WRITE on its transactional id; an
        // idempotent one, since Kafka 3.0 (KIP-679), only WRITE on the topics.
        if (body.transactionalId() != null
                && !access.transactionalId(request, AclOperation.WRITE, body.transactionalId())) {
            return acks == 0 ? done(null) : Access.refuse(request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        }
        List<CompletableFuture<TopicProduceResponse>> topicResults = new ArrayList<>();
        for (TopicProduceData topicData : body.data().topicData()) {
            TopicMetadata topic = byId ? topics.topic(topicData.topicId()) : topics.topic(topicData.name());
            String name = byId ? (topic == null ? null : topic.name()) : topicData.name();
            boolean mayWrite = name == null || access.topic(request, AclOperation.WRITE, name);
            List<CompletableFuture<PartitionProduceResponse>> results = new ArrayList<>();
            for (PartitionProduceData pd : topicData.partitionData()) {
                if (acks != 0 && acks != 1 && acks != -1) {
                    results.add(done(error(pd.index(), Errors.INVALID_REQUIRED_ACKS, null)));
                } else if (!mayWrite) {
                    results.add(done(error(pd.index(), Errors.TOPIC_AUTHORIZATION_FAILED, null)));
                } else if (topic == null || pd.index() < 0 || pd.index() >= topic.partitionCount()) {
                    results.add(done(error(pd.index(),
                            byId && topic == null ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION, null)));
                } else {
                    results.add(append(new TopicPartition(topic.name(), pd.index()), pd, body.transactionalId(),
                            request.version() >= FIRST_TV2_VERSION));
                }
            }
            topicResults.add(Futures.all(results).thenApply(list -> {
                TopicProduceResponse r = new TopicProduceResponse()
                        .setName(byId ? "" : topicData.name())
                        .setTopicId(topicData.topicId());
                list.forEach(p -> r.partitionResponses().add(p));
                return r;
            }));
        }
        CompletableFuture<List<TopicProduceResponse>> all = Futures.all(topicResults);
        if (acks == 0) {
            return all.thenApply(list -> null);
        }
        return all.thenApply(list -> {
            ProduceResponseData data = new ProduceResponseData();
            list.forEach(t -> data.responses().add(t));
            return new ProduceResponse(data);
        });
    }

    private CompletableFuture<PartitionProduceResponse> append(TopicPartition tp, PartitionProduceData pd,
            String transactionalId, boolean transactionV2) {
        if (!(pd.records() instanceof MemoryRecords records)) {
            return done(error(pd.index(), Errors.CORRUPT_MESSAGE, "records missing"));
        }
        RecordBatch first = firstBatch(records);
        // A control batch from a client is the log's to refuse (INVALID_RECORD), as Kafka does.
        if (first == null || !first.isTransactional() || first.isControlBatch()) {
            return appendVerified(tp, pd, records);
        }
        if (transactionalId == null) {
            return done(error(pd.index(), Errors.INVALID_TXN_STATE, "a transactional batch needs a transactional id"));
        }
        // KIP-890: a transactional batch goes in only if its partition is in the producer's ongoing
        // transaction, so a late retry after an abort cannot open a transaction nobody will end.
        // From v12 (transaction version 2) the batch adds its partition to the transaction itself.
        return respond(pd, transactions.appendTransactional(transactionalId, first.producerId(),
                first.producerEpoch(), tp, records, transactionV2));
    }

    /**
     * The first batch, or null when there is none to read a producer from: the log's validation
     * then says what is wrong. kafka-clients hands out a v2 batch whose length field is shorter
     * than the v2 header (down to the 14 bytes of a v0 record), and reading its producer id then
     * throws IndexOutOfBoundsException (found by the frame fuzzer).
     */
    private static RecordBatch firstBatch(MemoryRecords records) {
        try {
            RecordBatch first = records.firstBatch();
            if (first != null && first.magic() >= RecordBatch.MAGIC_VALUE_V2
                    && first.sizeInBytes() < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
                return null;
            }
            return first;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private CompletableFuture<PartitionProduceResponse> appendVerified(TopicPartition tp, PartitionProduceData pd,
            MemoryRecords records) {
        return respond(pd, logs.append(tp, records));
    }

    private static CompletableFuture<PartitionProduceResponse> respond(PartitionProduceData pd,
            CompletableFuture<Logs.Appended> appended) {
        return appended.thenApply(a -> a.error() != Errors.NONE
                ? error(pd.index(), a.error(), a.message())
                : new PartitionProduceResponse()
                        .setIndex(pd.index())
                        .setBaseOffset(a.baseOffset())
                        .setLogAppendTimeMs(a.logAppendTimeMs())
                        .setLogStartOffset(a.logStartOffset()));
    }

    private static PartitionProduceResponse error(int index, Errors error, String message) {
        return new PartitionProduceResponse().setIndex(index).setErrorCode(error.code())
                .setErrorMessage(message).setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
    }

    private static <T> CompletableFuture<T> done(T value) {
        return CompletableFuture.completedFuture(value);
    }
}
