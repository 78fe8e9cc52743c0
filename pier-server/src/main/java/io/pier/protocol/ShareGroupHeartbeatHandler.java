package io.pier.protocol;

import io.pier.group.HeartbeatRequest;
import io.pier.service.ShareGroups;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;

/** ShareGroupHeartbeat v1: maps the wire message onto the coordinator and back. */
public final class ShareGroupHeartbeatHandler implements ApiHandler {
    private final ShareGroups groups;

    public ShareGroupHeartbeatHandler(ShareGroups groups) {
        this.groups = groups;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ShareGroupHeartbeatRequestData in = request.bodyAs(ShareGroupHeartbeatRequest.class).data();
        HeartbeatRequest hb = new HeartbeatRequest(in.groupId(), in.memberId(), in.memberEpoch(), in.rackId(),
                in.subscribedTopicNames(), request.header().clientId(),
                request.connection().remoteAddress().getAddress().toString());
        return groups.heartbeat(hb).thenApply(r -> {
            ShareGroupHeartbeatResponseData out = new ShareGroupHeartbeatResponseData()
                    .setErrorCode(r.error().code())
                    .setErrorMessage(r.errorMessage())
                    .setMemberId(r.memberId())
                    .setMemberEpoch(r.memberEpoch())
                    .setHeartbeatIntervalMs(r.heartbeatIntervalMs());
            if (r.assignment() != null) {
                List<ShareGroupHeartbeatResponseData.TopicPartitions> tps = new ArrayList<>();
                r.assignment().forEach((topicId, partitions) -> tps.add(
                        new ShareGroupHeartbeatResponseData.TopicPartitions()
                                .setTopicId(topicId).setPartitions(new ArrayList<>(partitions))));
                out.setAssignment(new ShareGroupHeartbeatResponseData.Assignment().setTopicPartitions(tps));
            }
            return new ShareGroupHeartbeatResponse(out);
        });
    }
}
