package io.pier.protocol;

import io.pier.service.ConsumerGroups;
import io.pier.service.TransactionCoordinators;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;

/**
 * TxnOffsetCommit: the transaction coordinator checks (TV1) or adds (TV2, v5+) the group, then the
 * group checks the member as an OffsetCommit would and keeps the offsets pending for the producer
 * until the transaction's marker. Topics are named; the versions that carry topic ids instead are
 * answered UNSUPPORTED_VERSION. Not registered with the router yet (issue 13).
 */
public final class TxnOffsetCommitHandler {
    /** KIP-890 part 2: v5+ is sent by producers using transaction version 2. */
    static final short FIRST_TV2_VERSION = 5;
    /** v4 is the first usable with consumer-protocol groups (KIP-848): their checks are OffsetCommit v9's. */
    private static final short FIRST_CONSUMER_PROTOCOL_VERSION = 4;
    private static final short OFFSET_COMMIT_CLASSIC_VERSION = 8;
    private static final short OFFSET_COMMIT_CONSUMER_VERSION = 9;

    private final TransactionCoordinators coordinators;
    private final ConsumerGroups groups;

    private final Access access;

    public TxnOffsetCommitHandler(TransactionCoordinators coordinators, ConsumerGroups groups, Access access) {
        this.coordinators = coordinators;
        this.groups = groups;
        this.access = access;
    }

    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        TxnOffsetCommitRequestData in = request.bodyAs(TxnOffsetCommitRequest.class).data();
        short version = request.version();
        Map<TopicPartition, ConsumerGroups.Offset> offsets = new LinkedHashMap<>();
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t : in.topics()) {
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : t.partitions()) {
                offsets.put(new TopicPartition(t.name() == null ? "" : t.name(), p.partitionIndex()),
                        new ConsumerGroups.Offset(p.committedOffset(), p.committedLeaderEpoch(), p.committedMetadata()));
            }
        }
        if (TxnOffsetCommitResponse.useTopicIds(version)) {
            return CompletableFuture.completedFuture(all(offsets, Errors.UNSUPPORTED_VERSION));
        }
        // The transactional id and group were checked in front of this handler. As Kafka, a topic
        // without READ fails the whole commit: those partitions say why, the others were not tried.
        if (offsets.keySet().stream().anyMatch(tp -> !access.topic(request, AclOperation.READ, tp.topic()))) {
            Map<TopicPartition, Errors> each = new LinkedHashMap<>();
            offsets.keySet().forEach(tp -> each.put(tp, access.topic(request, AclOperation.READ, tp.topic())
                    ? Errors.OPERATION_NOT_ATTEMPTED : Errors.TOPIC_AUTHORIZATION_FAILED));
            return CompletableFuture.completedFuture(new TxnOffsetCommitResponse(0, each));
        }
        return coordinators.verifyOrAddGroup(in.transactionalId(), in.producerId(), in.producerEpoch(), in.groupId(),
                version >= FIRST_TV2_VERSION).thenCompose(error -> {
                    if (error != Errors.NONE) {
                        // Pre-KIP-588 clients (below v3) know INVALID_PRODUCER_EPOCH only.
                        return CompletableFuture.completedFuture(all(offsets,
                                TransactionHandlers.fenced(error, version, (short) 3)));
                    }
                    short offsetCommitVersion = version >= FIRST_CONSUMER_PROTOCOL_VERSION
                            ? OFFSET_COMMIT_CONSUMER_VERSION : OFFSET_COMMIT_CLASSIC_VERSION;
                    ConsumerGroups.CommitRequest commit = new ConsumerGroups.CommitRequest(in.groupId(),
                            in.generationIdOrMemberEpoch(), in.memberId() == null ? "" : in.memberId(),
                            in.groupInstanceId(), offsetCommitVersion, offsets);
                    return groups.commitTransactional(commit, in.producerId())
                            .thenApply(result -> (AbstractResponse) new TxnOffsetCommitResponse(0, result));
                });
    }

    private static AbstractResponse all(Map<TopicPartition, ConsumerGroups.Offset> offsets, Errors error) {
        Map<TopicPartition, Errors> each = new LinkedHashMap<>();
        offsets.keySet().forEach(tp -> each.put(tp, error));
        return new TxnOffsetCommitResponse(0, each);
    }
}
