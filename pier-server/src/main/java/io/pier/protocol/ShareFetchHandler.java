package io.pier.protocol;

import io.pier.service.ClientConnection;
import io.pier.service.LongPoll;
import io.pier.service.Partition;
import io.pier.service.Polls;
import io.pier.service.ShareService.Acquired;
import io.pier.service.ShareService;
import io.pier.service.ShareSessions.PartitionRef;
import io.pier.service.ShareSessions;
import io.pier.service.TopicService;
import io.pier.share.AcknowledgeType;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.share.AcquiredRange;
import io.pier.state.SharePartitionKey;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;

/**
 * ShareFetch v1-2: session step, piggybacked acknowledgements, then acquisition. A fetch that
 * acquires nothing parks until records may have become acquirable on one of its partitions (new
 * data, a release, a lock expiry) or MaxWaitMs passes, so clients never spin.
 */
public final class ShareFetchHandler implements ApiHandler {
    private static final int MAX_MEMBER_ID_LENGTH = 36;

    private final TopicService topics;
    private final ShareSessions sessions;
    private final ShareAcks acks;
    private final ShareService shares;
    private final Polls polls;
    private final Access access;

    public ShareFetchHandler(TopicService topics, ShareSessions sessions, ShareAcks acks, ShareService shares,
            Polls polls, Access access) {
        this.access = access;
        this.topics = topics;
        this.sessions = sessions;
        this.acks = acks;
        this.shares = shares;
        this.polls = polls;
    }

    static boolean validMemberId(String memberId) {
        return memberId != null && !memberId.isEmpty() && memberId.length() <= MAX_MEMBER_ID_LENGTH;
    }

    @Override
    public CompletableFuture<AbstractResponse> handle(ApiRequest request) {
        ShareFetchRequestData in = request.bodyAs(ShareFetchRequest.class).data();
        if (in.groupId() == null || in.groupId().isEmpty() || !validMemberId(in.memberId())) {
            return error(Errors.INVALID_REQUEST, "GroupId and a MemberId of 1 to 36 characters are required", 0);
        }
        if (in.isRenewAck() && (in.maxBytes() != 0 || in.minBytes() != 0 || in.maxRecords() != 0
                || in.maxWaitMs() != 0)) {
            return error(Errors.INVALID_REQUEST, "A renew-only request must not ask for records", 0);
        }
        if (!AcquireMode.isKnown(in.shareAcquireMode())) {
            // Found by RequestFuzzTest: the mode was only read once records were due, and the
            // unknown id failed the fetch with UNKNOWN_SERVER_ERROR after its share session had opened.
            return error(Errors.INVALID_REQUEST, "ShareAcquireMode must be 0 (batch_optimized) or 1 (record_limit), got "
                    + in.shareAcquireMode(), 0);
        }
        int lockMs = shares.lockDurationMs(in.groupId());
        int epoch = in.shareSessionEpoch();
        List<PartitionRef> added = new ArrayList<>();
        List<ShareAcks.PartitionAcks> ackList = new ArrayList<>();
        for (ShareFetchRequestData.FetchTopic t : in.topics()) {
            for (ShareFetchRequestData.FetchPartition p : t.partitions()) {
                added.add(new PartitionRef(t.topicId(), p.partitionIndex()));
                if (!p.acknowledgementBatches().isEmpty()) {
                    List<AcknowledgementBatches.Wire> wire = new ArrayList<>();
                    p.acknowledgementBatches().forEach(b -> wire.add(
                            new AcknowledgementBatches.Wire(b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                    ackList.add(new ShareAcks.PartitionAcks(t.topicId(), p.partitionIndex(), wire));
                }
            }
        }
        if (epoch == ShareSessions.INITIAL_EPOCH && !ackList.isEmpty()) {
            return error(Errors.INVALID_REQUEST, "Acknowledgements cannot open a share session", lockMs);
        }
        List<PartitionRef> forgotten = new ArrayList<>();
        for (ShareFetchRequestData.ForgottenTopic t : in.forgottenTopicsData()) {
            t.partitions().forEach(p -> forgotten.add(new PartitionRef(t.topicId(), p)));
        }
        ShareSessions.Key key = new ShareSessions.Key(in.groupId(), in.memberId());
        return sessions.onFetch(key, epoch, epoch == ShareSessions.FINAL_EPOCH ? List.of() : added, forgotten,
                request.connection()).thenCompose(context -> context.error() == Errors.SHARE_SESSION_LIMIT_REACHED
                        ? refuseAfterMaxWait(in, lockMs)
                        : context.error() != Errors.NONE ? error(context.error(), null, lockMs)
                        : fetch(request, in, key, context, ackList, lockMs));
    }

    /**
     * SHARE_SESSION_LIMIT_REACHED, answered once MaxWaitMs has passed, as Kafka answers it since
     * 4.1 (KAFKA-19231): the client sends its next ShareFetch as soon as it has the answer, so an
     * answer at once had a refused consumer ask thousands of times a second while the cache stayed
     * full (SessionEvictionIT).
     */
    private CompletableFuture<AbstractResponse> refuseAfterMaxWait(ShareFetchRequestData in, int lockMs) {
        return polls.<Boolean>start(ApiKeys.SHARE_FETCH, in.groupId(), in.maxWaitMs(),
                        (last, wake) -> CompletableFuture.completedFuture(last ? Boolean.TRUE : null))
                .thenCompose(waited -> error(Errors.SHARE_SESSION_LIMIT_REACHED, null, lockMs));
    }

    /**
     * After the session step: the acknowledgements, then (unless closing or renewing) the
     * acquisition, answered once both are done and the acknowledgements durable.
     *
     * <p>The acquisition starts as soon as the acknowledgements are applied on their shards, not
     * once they are durable: the records they settle no longer count against the in-flight
     * window, and the acquisition's own write (with {@code pier.share.delivery.count.durable})
     * reaches the share-state log with theirs, so a fetch costs one fsync instead of two in a row.
     * Waiting for durability first was measured as the better of the two only while settling
     * records still filled the window.
     */
    private CompletableFuture<AbstractResponse> fetch(ApiRequest request, ShareFetchRequestData in,
            ShareSessions.Key key, ShareSessions.Context context, List<ShareAcks.PartitionAcks> ackList, int lockMs) {
        int epoch = in.shareSessionEpoch();
        // The group was checked before the request got here; each topic is checked per partition.
        Predicate<String> mayRead = access.topics(request, AclOperation.READ);
        ShareAcks.Stages acked = acks.applyInStages(in.groupId(), in.memberId(), ackList, request.version(),
                in.isRenewAck(), mayRead);
        if (epoch == ShareSessions.FINAL_EPOCH) {
            return acked.outcome().thenCompose(ackResults -> sessions.close(key)
                    .thenApply(v -> respond(Map.of(), ackResults, false, lockMs)));
        }
        if (in.isRenewAck()) {
            return acked.outcome().thenApply(ackResults -> respond(Map.of(), ackResults, false, lockMs));
        }
        boolean carriedAcks = !ackList.isEmpty();
        ClientConnection connection = request.connection();
        return acked.applied().thenCompose(v ->
                // At home on the group's shard, where its coordinator and share sessions are.
                polls.<Map<PartitionRef, Acquired>>start(ApiKeys.SHARE_FETCH, in.groupId(), in.maxWaitMs(),
                        (last, wake) -> connection.isClosed() ? CompletableFuture.completedFuture(Map.of())
                                : attempt(in, context, carriedAcks, last, wake, mayRead)))
                .thenApply(fetched -> connection.isClosed() ? giveBack(in, fetched, request.version()) : fetched)
                .thenCombine(acked.outcome(), (fetched, ackResults) ->
                        respond(fetched, ackResults, context.isNew(), lockMs));
    }

    /**
     * What a fetch acquired for a connection that has closed meanwhile, given back at once as
     * RELEASE from its member. The connection's session went with it, and with that everything its
     * member held; records acquired after that would wait out their lock for an answer no one
     * reads, so a fetch of a closed connection acquires nothing more (above), and this gives back
     * what it acquired while the connection closed (the delivery counted, as on Kafka 4.4, which
     * also gives such records back at once; ParkedShareFetchIT). Only this fetch's records: the
     * member may already hold others through a new connection.
     */
    private Map<PartitionRef, Acquired> giveBack(ShareFetchRequestData in, Map<PartitionRef, Acquired> fetched,
            short version) {
        List<ShareAcks.PartitionAcks> releases = new ArrayList<>();
        fetched.forEach((ref, acquired) -> {
            List<AcknowledgementBatches.Wire> wire = new ArrayList<>();
            for (AcquiredRange range : acquired.ranges()) {
                wire.add(new AcknowledgementBatches.Wire(range.firstOffset(), range.lastOffset(),
                        List.of(AcknowledgeType.RELEASE.id)));
            }
            if (!wire.isEmpty()) {
                releases.add(new ShareAcks.PartitionAcks(ref.topicId(), ref.partition(), wire));
            }
        });
        if (!releases.isEmpty()) {
            var unused = acks.apply(in.groupId(), in.memberId(), releases, version, false, topic -> true);
        }
        return fetched;
    }

    /**
     * One acquisition over the session's partitions; null (keep waiting) if nothing came and time is
     * left.
     *
     * <p>A fetch that got nothing because its own member holds a partition up (the first record of
     * a full in-flight window is the member's, unacknowledged) is answered early: the Kafka client
     * keeps one ShareFetch in flight and sends its acknowledgements only with the next one, so
     * waiting out MaxWaitMs would stall every consumer of the partition for nothing. The first such
     * fetch is answered within 1 ms, each next one after as long as the member's fetches have found
     * the hold so far (the shortest over the partitions, at most MaxWaitMs): a client that
     * acknowledges promptly gets through at once, and one that keeps its records for long is not
     * made to spin, its empty answers coming twice as slowly each time.
     *
     * <p>A fetch that carried acknowledgements is answered at once too, with or without records
     * (Kafka parks it like any other): the client learns its ACCEPTs are durable one round trip
     * after sending them rather than when the next records happen to come, and its next fetch,
     * with nothing to acknowledge, is the one that waits. At low rates this halves the time from
     * produce to confirmed ACCEPT for one extra request per poll; at high rates fetches find
     * records anyway and nothing changes.
     */
    private CompletableFuture<Map<PartitionRef, Acquired>> attempt(ShareFetchRequestData in,
            ShareSessions.Context context, boolean carriedAcks, boolean last, LongPoll.Wake wake,
            Predicate<String> mayRead) {
        List<PartitionRef> targets = rotated(context.partitions(), in.shareSessionEpoch());
        int perPartitionBytes = targets.isEmpty() ? 0 : Math.max(1, in.maxBytes() / targets.size());
        Map<PartitionRef, Acquired> results = new LinkedHashMap<>();
        return acquireFrom(in, targets, 0, Math.max(0, in.maxRecords()), perPartitionBytes, wake, results, mayRead)
                .thenApply(v -> {
                    boolean gotAny = false;
                    for (Acquired a : results.values()) {
                        gotAny |= !a.ranges().isEmpty() || a.error() != Errors.NONE;
                    }
                    if (last || gotAny || carriedAcks || in.maxRecords() <= 0 || in.maxBytes() <= 0
                            || targets.isEmpty()) {
                        return results;
                    }
                    long heldUpMs = Long.MAX_VALUE;
                    for (Acquired a : results.values()) {
                        if (a.heldUpByMs() >= 0) {
                            heldUpMs = Math.min(heldUpMs, a.heldUpByMs());
                        }
                    }
                    if (heldUpMs != Long.MAX_VALUE) {
                        wake.answerWithin(Math.max(1, heldUpMs));
                    }
                    return null;
                });
    }

    /** Partitions one after another, so MaxRecords is a budget for the whole request. */
    private CompletableFuture<Void> acquireFrom(ShareFetchRequestData in, List<PartitionRef> targets, int index,
            int recordsLeft, int maxBytes, Partition.DataListener wake, Map<PartitionRef, Acquired> results,
            Predicate<String> mayRead) {
        if (index >= targets.size()) {
            return CompletableFuture.completedFuture(null);
        }
        PartitionRef ref = targets.get(index);
        CompletableFuture<Acquired> one;
        TopicMetadata topic = topics.topic(ref.topicId());
        if (topic == null) {
            one = CompletableFuture.completedFuture(Acquired.failed(Errors.UNKNOWN_TOPIC_ID));
        } else if (!mayRead.test(topic.name())) {
            one = CompletableFuture.completedFuture(Acquired.failed(Errors.TOPIC_AUTHORIZATION_FAILED));
        } else if (ref.partition() < 0 || ref.partition() >= topic.partitionCount()) {
            one = CompletableFuture.completedFuture(Acquired.failed(Errors.UNKNOWN_TOPIC_OR_PARTITION));
        } else if (recordsLeft <= 0) {
            one = CompletableFuture.completedFuture(Acquired.NONE);
        } else {
            AcquireLimits limits = new AcquireLimits(recordsLeft, Math.max(1, in.batchSize()),
                    AcquireMode.forId(in.shareAcquireMode()));
            one = shares.acquire(new TopicPartition(topic.name(), ref.partition()),
                    new SharePartitionKey(in.groupId(), ref.topicId(), ref.partition()), in.memberId(), limits,
                    maxBytes, wake);
        }
        return one.thenCompose(acquired -> {
            results.put(ref, acquired);
            int left = (int) Math.max(0, recordsLeft - acquired.recordCount());
            return acquireFrom(in, targets, index + 1, left, maxBytes, wake, results, mayRead);
        });
    }

    /** Rotates the starting partition by epoch so no partition is always served last. */
    private static List<PartitionRef> rotated(List<PartitionRef> all, int epoch) {
        if (all.size() < 2) {
            return all;
        }
        int start = Math.floorMod(epoch, all.size());
        List<PartitionRef> out = new ArrayList<>(all.size());
        out.addAll(all.subList(start, all.size()));
        out.addAll(all.subList(0, start));
        return out;
    }

    private static AbstractResponse respond(Map<PartitionRef, Acquired> fetched, Map<PartitionRef, Errors> ackResults,
            boolean includeAll, int lockMs) {
        ShareFetchResponseData data = new ShareFetchResponseData().setAcquisitionLockTimeoutMs(lockMs);
        Map<PartitionRef, ShareFetchResponseData.PartitionData> out = new LinkedHashMap<>();
        fetched.forEach((ref, a) -> {
            // An incremental session only reports partitions with something to say.
            if (includeAll || !a.ranges().isEmpty() || a.error() != Errors.NONE) {
                ShareFetchResponseData.PartitionData pd = partitionData(ref)
                        .setErrorCode(a.error().code())
                        .setRecords(a.records());
                for (AcquiredRange r : a.ranges()) {
                    pd.acquiredRecords().add(new ShareFetchResponseData.AcquiredRecords()
                            .setFirstOffset(r.firstOffset()).setLastOffset(r.lastOffset())
                            .setDeliveryCount(r.deliveryCount()));
                }
                out.put(ref, pd);
            }
        });
        ackResults.forEach((ref, error) -> out.computeIfAbsent(ref, ShareFetchHandler::partitionData)
                .setAcknowledgeErrorCode(error.code()));
        out.forEach((ref, pd) -> {
            ShareFetchResponseData.ShareFetchableTopicResponse topic = data.responses().find(ref.topicId());
            if (topic == null) {
                topic = new ShareFetchResponseData.ShareFetchableTopicResponse().setTopicId(ref.topicId());
                data.responses().add(topic);
            }
            topic.partitions().add(pd);
        });
        return new MessageResponse(ApiKeys.SHARE_FETCH, data, data::setThrottleTimeMs);
    }

    /**
     * A partition's answer, with no leader hint: the generated default is leader 0 at epoch 0,
     * which a client told NOT_LEADER_OR_FOLLOWER (a gateway node that does not serve the partition)
     * would take as the new leader instead of reading its metadata again.
     */
    private static ShareFetchResponseData.PartitionData partitionData(PartitionRef ref) {
        return new ShareFetchResponseData.PartitionData().setPartitionIndex(ref.partition())
                .setRecords(MemoryRecords.EMPTY)
                .setCurrentLeader(new ShareFetchResponseData.LeaderIdAndEpoch().setLeaderId(-1).setLeaderEpoch(-1));
    }

    private static CompletableFuture<AbstractResponse> error(Errors error, String message, int lockMs) {
        ShareFetchResponseData data = new ShareFetchResponseData()
                .setErrorCode(error.code()).setErrorMessage(message).setAcquisitionLockTimeoutMs(lockMs);
        return CompletableFuture.completedFuture(new MessageResponse(ApiKeys.SHARE_FETCH, data,
                data::setThrottleTimeMs));
    }
}
