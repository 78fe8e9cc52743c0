package io.pier.protocol;

import io.pier.service.RateQuotas;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * Client quotas around a handler, as Kafka applies them: the request is served in full, its
 * response carries {@code throttle_time_ms}, and the network layer stops reading the connection
 * for that long once the response is written (KIP-219: the client holds back too). Produce counts
 * the bytes of its record batches against {@code producer_byte_rate}. An acks=0 produce has no
 * response to carry the time, so it is counted but not throttled. Fetch counts the records of its
 * response against {@code consumer_byte_rate}; over the quota it is answered with no partitions
 * (Kafka's throttled fetch response), and those records are not counted. ShareFetch counts
 * against {@code consumer_byte_rate} too, but keeps its records: they were acquired for this
 * consumer, and Kafka's empty throttled answer would leave them locked, out of everyone's reach,
 * until the acquisition lock times out. The throttle time and the muted channel slow the
 * consumer just the same.
 */
public final class QuotaThrottle {
    private QuotaThrottle() {}

    public static ApiHandler produce(ApiHandler handler, RateQuotas quotas) {
        return request -> {
            int throttleMs = quotas.record(request.principal(), request.header().clientId(),
                    recordBytes(request.bodyAs(ProduceRequest.class)));
            CompletableFuture<AbstractResponse> response = handler.handle(request);
            return throttleMs == 0 ? response : response.thenApply(r -> {
                if (r != null) {
                    r.maybeSetThrottleTimeMs(throttleMs);
                }
                return r;
            });
        };
    }

    public static ApiHandler fetch(ApiHandler handler, RateQuotas quotas) {
        return request -> handler.handle(request).thenApply(r -> {
            FetchResponse response = (FetchResponse) r;
            int throttleMs = quotas.recordUnlessOver(request.principal(), request.header().clientId(),
                    recordBytes(response));
            if (throttleMs == 0) {
                return response;
            }
            return FetchResponse.of(new FetchResponseData().setSessionId(response.data().sessionId())
                    .setThrottleTimeMs(throttleMs));
        });
    }

    public static ApiHandler shareFetch(ApiHandler handler, RateQuotas quotas) {
        return request -> handler.handle(request).thenApply(r -> {
            int throttleMs = quotas.record(request.principal(), request.header().clientId(),
                    recordBytes((ShareFetchResponseData) r.data()));
            if (throttleMs > 0) {
                r.maybeSetThrottleTimeMs(throttleMs);
            }
            return r;
        });
    }

    private static long recordBytes(ShareFetchResponseData response) {
        long bytes = 0;
        for (ShareFetchResponseData.ShareFetchableTopicResponse topic : response.responses()) {
            for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                if (partition.records() != null) {
                    bytes += partition.records().sizeInBytes();
                }
            }
        }
        return bytes;
    }

    private static long recordBytes(FetchResponse response) {
        long bytes = 0;
        for (FetchableTopicResponse topic : response.data().responses()) {
            for (PartitionData partition : topic.partitions()) {
                if (partition.records() != null) {
                    bytes += partition.records().sizeInBytes();
                }
            }
        }
        return bytes;
    }

    private static long recordBytes(ProduceRequest request) {
        long bytes = 0;
        for (TopicProduceData topic : request.data().topicData()) {
            for (PartitionProduceData partition : topic.partitionData()) {
                if (partition.records() != null) {
                    bytes += partition.records().sizeInBytes();
                }
            }
        }
        return bytes;
    }
}
