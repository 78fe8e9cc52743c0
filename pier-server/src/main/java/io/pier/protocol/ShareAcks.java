package io.pier.protocol;

import io.pier.service.Futures;
import io.pier.service.ShareService;
import io.pier.service.ShareSessions.PartitionRef;
import io.pier.service.TopicService;
import io.pier.share.AckBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/** Applies the acknowledgements of one ShareFetch or ShareAcknowledge, partition by partition. */
public final class ShareAcks {
    private final TopicService topics;
    private final ShareService shares;

    public ShareAcks(TopicService topics, ShareService shares) {
        this.topics = topics;
        this.shares = shares;
    }

    /** The acknowledgements for one partition, as they came off the wire. */
    record PartitionAcks(Uuid topicId, int partition, List<AcknowledgementBatches.Wire> batches) {}

    /**
     * Completes with each partition's outcome, in request order, once every change is durable; a
     * topic {@code mayRead} refuses gets TOPIC_AUTHORIZATION_FAILED and is left untouched.
     */
    CompletableFuture<Map<PartitionRef, Errors>> apply(String groupId, String memberId,
            List<PartitionAcks> requested, short version, boolean isRenewAck, Predicate<String> mayRead) {
        return applyInStages(groupId, memberId, requested, version, isRenewAck, mayRead).outcome();
    }

    /**
     * The acknowledgements of one request in two stages: {@code applied} once every partition has
     * settled its records tentatively, {@code outcome} as {@link #apply} gives it.
     */
    record Stages(CompletableFuture<Void> applied, CompletableFuture<Map<PartitionRef, Errors>> outcome) {}

    /** {@link #apply}, with the moment every change is applied as a stage of its own. */
    Stages applyInStages(String groupId, String memberId, List<PartitionAcks> requested, short version,
            boolean isRenewAck, Predicate<String> mayRead) {
        List<PartitionRef> keys = new ArrayList<>();
        List<CompletableFuture<Void>> applied = new ArrayList<>();
        List<CompletableFuture<Errors>> results = new ArrayList<>();
        for (PartitionAcks acks : requested) {
            TopicMetadata topic = topics.topic(acks.topicId());
            keys.add(new PartitionRef(acks.topicId(), acks.partition()));
            ShareService.AckStages one = topic != null && !mayRead.test(topic.name())
                    ? ShareService.AckStages.done(Errors.TOPIC_AUTHORIZATION_FAILED)
                    : applyOne(groupId, memberId, acks, topic, version, isRenewAck);
            applied.add(one.applied());
            results.add(one.outcome());
        }
        CompletableFuture<Map<PartitionRef, Errors>> outcome = Futures.all(results).thenApply(errors -> {
            Map<PartitionRef, Errors> out = new LinkedHashMap<>();
            for (int i = 0; i < keys.size(); i++) {
                out.put(keys.get(i), errors.get(i));
            }
            return out;
        });
        return new Stages(Futures.all(applied).thenApply(v -> null), outcome);
    }

    private ShareService.AckStages applyOne(String groupId, String memberId, PartitionAcks acks,
            TopicMetadata topic, short version, boolean isRenewAck) {
        if (topic == null) {
            return ShareService.AckStages.done(Errors.UNKNOWN_TOPIC_ID);
        }
        if (acks.partition() < 0 || acks.partition() >= topic.partitionCount()) {
            return ShareService.AckStages.done(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        if (acks.batches().isEmpty()) {
            return ShareService.AckStages.done(Errors.NONE);
        }
        List<AckBatch> batches = AcknowledgementBatches.validate(acks.batches(), version, isRenewAck);
        if (batches == null) {
            return ShareService.AckStages.done(Errors.INVALID_REQUEST);
        }
        return shares.acknowledgeInStages(new TopicPartition(topic.name(), acks.partition()), new SharePartitionKey(groupId, topic.id(), acks.partition()),
                memberId, batches);
    }
}
