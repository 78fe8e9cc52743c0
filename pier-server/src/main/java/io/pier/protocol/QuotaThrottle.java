package io.pier.protocol;

import io.pier.service.ByteRateQuotas;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData;
import org.apache.kafka.common.message.ProduceRequestData.TopicProduceData;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;

/**
 * Client quotas around a handler, as Kafka applies them: the request is served in full, its
 * response carries {@code throttle_time_ms}, and the network layer stops reading the connection
 * for that long once the response is written (KIP-219: the client holds back too). Produce counts
 * the bytes of its record batches against {@code producer_byte_rate}. An acks=0 produce has no
 * response to carry the time, so it is counted but not throttled.
 */
public final class QuotaThrottle {
    private QuotaThrottle() {}

    public static ApiHandler produce(ApiHandler handler, ByteRateQuotas quotas) {
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
