package io.pier.it.soak;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;

/**
 * Invariant I11, duplicates justified: every delivery of a record after its first is explained by
 * what became of the delivery before it. A share consumer reports each delivery and the outcome of
 * its acknowledgement; the soak reports each crash. Once the load has stopped, {@link #check}
 * explains every redelivery by its cause, or records a violation.
 *
 * <p>The causes: the record was RELEASEd; its acknowledgement was not confirmed (refused, failed,
 * or lost with the broker); it was held past its lock before being acknowledged; or the broker
 * crashed between the two deliveries, taking unconfirmed locks with it (a fetch answer lost that
 * way also explains a delivery count the load never saw). A redelivery after a confirmed ACCEPT
 * or REJECT is I5's violation; one whose previous delivery had no outcome and no crash behind it
 * is I11's.
 */
final class Redeliveries {
    /** What became of one delivery. */
    enum Outcome { PENDING, RELEASED, FINAL_CONFIRMED, NOT_CONFIRMED, HELD_PAST_LOCK }

    /** Why a record was delivered again, as {@link #check} found it. */
    enum Cause { RELEASED, NOT_CONFIRMED, HELD_PAST_LOCK, CRASH, AFTER_FINAL, UNEXPLAINED }

    private static final class Delivery {
        final short count;
        final int epoch;
        volatile Outcome outcome = Outcome.PENDING;

        Delivery(short count, int epoch) {
            this.count = count;
            this.epoch = epoch;
        }
    }

    private record Key(TopicPartition tp, long offset) {}

    private final Map<Key, List<Delivery>> deliveries = new ConcurrentHashMap<>();
    /** Crashes so far: a delivery made in an earlier epoch lost its lock in a crash. */
    private final AtomicInteger epoch = new AtomicInteger();
    private final Map<Cause, Integer> causes = new EnumMap<>(Cause.class);

    void delivered(TopicPartition tp, long offset, short count) {
        List<Delivery> list = deliveries.computeIfAbsent(new Key(tp, offset), k -> new ArrayList<>());
        synchronized (list) {
            list.add(new Delivery(count, epoch.get()));
        }
    }

    /**
     * The outcome of the delivery of {@code tp@offset} with {@code count}. A confirmed ACCEPT or
     * REJECT of a delivery the record has already outlived (it was delivered again with a higher
     * count) is an I5 violation in the other order: the broker took the acknowledgement of a
     * holder whose lock had gone.
     */
    void outcome(TopicPartition tp, long offset, short count, Outcome outcome, Violations violations) {
        List<Delivery> list = deliveries.get(new Key(tp, offset));
        if (list == null) {
            return;
        }
        synchronized (list) {
            for (Delivery d : list) {
                if (d.count == count && d.outcome == Outcome.PENDING) {
                    d.outcome = outcome;
                }
                if (outcome == Outcome.FINAL_CONFIRMED && d.count > count) {
                    violations.add("I5", tp + "@" + offset + ": ACCEPT/REJECT of delivery " + count
                            + " confirmed although the record was delivered again with count " + d.count);
                }
            }
        }
    }

    void crashed() {
        epoch.incrementAndGet();
    }

    /** Explains every redelivery; to be called once the consumers have stopped. */
    void check(Violations violations) {
        deliveries.forEach((key, list) -> {
            synchronized (list) {
                List<Delivery> ordered = new ArrayList<>(list);
                ordered.sort((a, b) -> Short.compare(a.count, b.count));
                for (int i = 1; i < ordered.size(); i++) {
                    Delivery before = ordered.get(i - 1);
                    Delivery again = ordered.get(i);
                    Cause cause = cause(before, again);
                    causes.merge(cause, 1, Integer::sum);
                    if (cause == Cause.UNEXPLAINED) {
                        violations.add("I11", key.tp() + "@" + key.offset() + " delivered again with count "
                                + again.count + " after delivery " + before.count + " ended " + before.outcome
                                + ", no crash between them");
                    }
                }
            }
        });
    }

    private static Cause cause(Delivery before, Delivery again) {
        return switch (before.outcome) {
            case RELEASED -> Cause.RELEASED;
            case NOT_CONFIRMED -> Cause.NOT_CONFIRMED;
            case HELD_PAST_LOCK -> Cause.HELD_PAST_LOCK;
            // Another delivery after a confirmed ACCEPT/REJECT is I5's violation, reported as such.
            case FINAL_CONFIRMED -> Cause.AFTER_FINAL;
            case PENDING -> again.epoch > before.epoch ? Cause.CRASH : Cause.UNEXPLAINED;
        };
    }

    /** Deliveries in all, the redeliveries among them, and their causes, as {@link #check} counted them. */
    String summary() {
        int total = deliveries.values().stream().mapToInt(List::size).sum();
        int again = causes.values().stream().mapToInt(Integer::intValue).sum();
        return String.format("%d redeliveries in %d deliveries (%.2f%%), by cause %s", again, total,
                total == 0 ? 0.0 : 100.0 * again / total, causes);
    }
}
