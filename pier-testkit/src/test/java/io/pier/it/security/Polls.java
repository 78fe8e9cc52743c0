package io.pier.it.security;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;

/** Polling a consumer, plain or share, until enough records came, bounded in time. */
final class Polls {
    private Polls() {}

    /**
     * The values of up to {@code count} records, polled for at most {@code waitMs}; a poll's
     * failure (what a refused consumer gets) is thrown.
     */
    static <V> List<V> values(Function<Duration, ConsumerRecords<?, V>> poll, int count, long waitMs) {
        List<V> got = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (got.size() < count && System.nanoTime() < deadline) {
            for (ConsumerRecord<?, V> r : poll.apply(Duration.ofMillis(200))) {
                got.add(r.value());
            }
        }
        return got;
    }
}
