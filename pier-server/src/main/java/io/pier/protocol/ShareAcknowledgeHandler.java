package io.pier.protocol;

import io.pier.service.ShareService;
import io.pier.service.ShareSessions.PartitionRef;
import io.pier.service.ShareSessions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AclOperation;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;

/**
 * ShareAcknowledge v1-2: acknowledgements outside a fetch (commitSync, commitAsync, close). Epoch
 * -1 applies the acks, then closes the session and releases what the member still holds.
 */
public final class ShareAcknowledgeHandler implements ApiHandler {
    private final ShareSessions sessions;
    private final ShareAcks acks;
    private final ShareService shares;

    private final Access access;

    public ShareAcknowledgeHandler(ShareSessions sessions, ShareAcks acks, ShareService shares, Access access) {
        this.access = access;
        this.sessions = sessions;
        this.acks = acks;
        this.shares = shares;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ShareAcknowledgeRequestData in = request.bodyAs(ShareAcknowledgeRequest.class).data();
        if (in.groupId() == null || in.groupId().isEmpty() || !ShareFetchHandler.validMemberId(in.memberId())) {
            return error(Errors.INVALID_REQUEST, "GroupId and MemberId are required", 0);
        }
        int lockMs = shares.lockDurationMs(in.groupId());
        ShareSessions.Key key = new ShareSessions.Key(in.groupId(), in.memberId());
        return sessions.onAcknowledge(key, in.shareSessionEpoch()).thenCompose(context -> context.error() != Errors.NONE
                ? error(context.error(), null, lockMs)
                : acknowledge(request, in, key, lockMs));
    }

    private CompletableFuture<AbstractResponse> acknowledge(ApiRequest request, ShareAcknowledgeRequestData in,
            ShareSessions.Key key, int lockMs) {
        List<ShareAcks.PartitionAcks> requested = new ArrayList<>();
        for (ShareAcknowledgeRequestData.AcknowledgeTopic t : in.topics()) {
            for (ShareAcknowledgeRequestData.AcknowledgePartition p : t.partitions()) {
                List<AcknowledgementBatches.Wire> wire = new ArrayList<>();
                p.acknowledgementBatches().forEach(b ->
                        wire.add(new AcknowledgementBatches.Wire(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                requested.add(new ShareAcks.PartitionAcks(t.topicId(), p.partitionIndex(), wire));
            }
        }
        return acks.apply(in.groupId(), in.memberId(), requested, request.version(), in.isRenewAck(),
                        access.topics(request, AclOperation.READ))
                .thenCompose(results -> in.shareSessionEpoch() == ShareSessions.FINAL_EPOCH
                        ? sessions.close(key).thenApply(v -> respond(results, lockMs))
                        : CompletableFuture.completedFuture(respond(results, lockMs)));
    }

    private static AbstractResponse respond(Map<PartitionRef, Errors> results, int lockMs) {
        ShareAcknowledgeResponseData data = new ShareAcknowledgeResponseData().setAcquisitionLockTimeoutMs(lockMs);
        results.forEach((tip, error) -> {
            ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse topic = data.responses().find(tip.topicId());
            if (topic == null) {
                topic = new ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse().setTopicId(tip.topicId());
                data.responses().add(topic);
            }
            topic.partitions().add(new ShareAcknowledgeResponseData.PartitionData()
                    .setPartitionIndex(tip.partition())
                    .setErrorCode(error.code())
                    // no leader hint (the generated default, leader 0 at epoch 0, would be taken as one)
                    .setCurrentLeader(new ShareAcknowledgeResponseData.LeaderIdAndEpoch().setLeaderId(-1)
                            .setLeaderEpoch(-1)));
        });
        return new ShareAcknowledgeResponse(data);
    }

    private static CompletableFuture<AbstractResponse> error(Errors error, String message, int lockMs) {
        return CompletableFuture.completedFuture(new ShareAcknowledgeResponse(new ShareAcknowledgeResponseData()
                .setErrorCode(error.code()).setErrorMessage(message).setAcquisitionLockTimeoutMs(lockMs)));
    }
}
