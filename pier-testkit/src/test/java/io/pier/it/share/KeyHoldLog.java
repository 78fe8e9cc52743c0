package io.pier.it.share;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What share consumers saw of a key-ordered share-partition, from the client side only, and the
 * checks of the key-order rule that can be made from it without ever blaming legitimate timing.
 *
 * <p>Every delivery is a {@link Hold}: which consumer, key, offset and delivery count, and {@code
 * returnedNs}, the {@link System#nanoTime()} right after the {@code poll()} that handed it to the
 * application returned. The broker acquired the record at or before that instant (possibly much
 * earlier: the client prefetches). A verdict sets {@code verdictNs}, taken right <em>before</em>
 * {@code acknowledge()} is called; in explicit mode the client sends nothing before that call, so
 * the broker applies the verdict after that instant. The verdict is <em>confirmed</em> when the
 * following {@code commitSync} reported no error for the partition. The broker refuses
 * (INVALID_RECORD_STATE) an acknowledgement of a record that is not ACQUIRED by that member, so a
 * confirmed verdict proves the record was still unsettled (not ACKNOWLEDGED nor ARCHIVED) when the
 * consumer called {@code acknowledge()}, and, held by that consumer, from its acquisition until
 * then. A verdict is not counted as confirmed when another delivery of the same offset with a
 * higher delivery count had already been returned before it (the lock had expired), nor when the
 * test held the record past its lock on purpose: both are ends "by lock expiry", which prove
 * nothing. All instants come from one JVM's monotonic clock; every inference below follows a
 * causal chain through the broker (verdict call, request, broker, response, poll return).
 *
 * <ul>
 *   <li>{@link #orderViolations()}: for offsets {@code o1 < o2} of one key, let {@code L(o1)} be
 *       the latest confirmed verdict call of any delivery of {@code o1}: {@code o1} was unsettled
 *       up to then. A delivery of {@code o2} whose poll returned before {@code L(o1)} was acquired
 *       while {@code o1} was unsettled, which the rule forbids.
 *   <li>{@link #overlaps()}: two deliveries of one key with confirmed verdicts were held, for
 *       sure, over {@code [returnedNs, verdictNs]} each; if those intervals intersect, two holds of
 *       one key coexisted. Reported when the holders are different consumers.
 *   <li>{@link #acceptOrderViolations()}: per key, confirmed ACCEPTs sorted by verdict call must
 *       have strictly increasing offsets.
 * </ul>
 */
final class KeyHoldLog {
    /** How a verdict ended up. */
    enum Outcome { NONE, CONFIRMED, FAILED }

    /** One delivery of a record to one consumer. */
    static final class Hold {
        final int consumer;
        final String key;
        final long offset;
        final short count;
        final String value;
        final long returnedNs;
        volatile long verdictNs = -1;
        volatile AcknowledgeType type;
        volatile Outcome outcome = Outcome.NONE;
        volatile boolean heldPastLock;

        Hold(int consumer, String key, long offset, short count, String value, long returnedNs) {
            this.consumer = consumer;
            this.key = key;
            this.offset = offset;
            this.count = count;
            this.value = value;
            this.returnedNs = returnedNs;
        }

        @Override
        public String toString() {
            return "c" + consumer + ":" + key + "@" + offset + "#" + count + " ret=" + ms(returnedNs)
                    + (verdictNs < 0 ? "" : " " + type + "@" + ms(verdictNs) + " " + outcome)
                    + (heldPastLock ? " (held past lock)" : "");
        }
    }

    private static final long T0 = System.nanoTime();
    private final ConcurrentLinkedQueue<Hold> holds = new ConcurrentLinkedQueue<>();

    private static String ms(long ns) {
        return String.format("%.1fms", (ns - T0) / 1e6);
    }

    Hold delivered(int consumer, ConsumerRecord<String, String> r, long returnedNs) {
        Hold h = new Hold(consumer, r.key(), r.offset(), r.deliveryCount().orElse((short) -1), r.value(), returnedNs);
        holds.add(h);
        return h;
    }

    /** To be called right before {@code acknowledge(record, type)}. */
    static void verdict(Hold h, AcknowledgeType type) {
        h.type = type;
        h.verdictNs = System.nanoTime();
    }

    static void committed(Collection<Hold> verdicts, boolean ok) {
        for (Hold h : verdicts) {
            h.outcome = ok ? Outcome.CONFIRMED : Outcome.FAILED;
        }
    }

    List<Hold> all() {
        return new ArrayList<>(holds);
    }

    /** Keyed deliveries by key, then by offset. */
    private Map<String, TreeMap<Long, List<Hold>>> byKey() {
        Map<String, TreeMap<Long, List<Hold>>> m = new HashMap<>();
        for (Hold h : holds) {
            if (h.key != null) {
                m.computeIfAbsent(h.key, k -> new TreeMap<>()).computeIfAbsent(h.offset, o -> new ArrayList<>()).add(h);
            }
        }
        return m;
    }

    /** A confirmed verdict that proves the record unsettled, and held by its consumer, until its call. */
    private static boolean proves(Hold h, List<Hold> sameOffset) {
        if (h.outcome != Outcome.CONFIRMED || h.heldPastLock || h.verdictNs < 0) {
            return false;
        }
        for (Hold other : sameOffset) {
            if (other.count > h.count && other.returnedNs < h.verdictNs) {
                return false; // redelivered before this verdict: the lock had expired
            }
        }
        return true;
    }

    List<String> orderViolations() {
        List<String> found = new ArrayList<>();
        for (var perKey : byKey().values()) {
            long maxL = Long.MIN_VALUE;
            Hold maxLBy = null;
            for (var e : perKey.entrySet()) {
                for (Hold h2 : e.getValue()) {
                    if (maxLBy != null && h2.returnedNs < maxL) {
                        found.add(h2 + " returned before the verdict on earlier " + maxLBy);
                    }
                }
                for (Hold h1 : e.getValue()) {
                    if (proves(h1, e.getValue()) && h1.verdictNs > maxL) {
                        maxL = h1.verdictNs;
                        maxLBy = h1;
                    }
                }
            }
        }
        return found;
    }

    List<String> overlaps() {
        List<String> found = new ArrayList<>();
        for (var perKey : byKey().values()) {
            List<Hold> sure = new ArrayList<>();
            perKey.values().forEach(list -> list.stream().filter(h -> proves(h, list)).forEach(sure::add));
            for (int i = 0; i < sure.size(); i++) {
                for (int j = i + 1; j < sure.size(); j++) {
                    Hold a = sure.get(i);
                    Hold b = sure.get(j);
                    if (a.consumer != b.consumer && Math.max(a.returnedNs, b.returnedNs) < Math.min(a.verdictNs, b.verdictNs)) {
                        found.add(a + " overlaps " + b);
                    }
                }
            }
        }
        return found;
    }

    List<String> acceptOrderViolations() {
        List<String> found = new ArrayList<>();
        for (var perKey : byKey().values()) {
            List<Hold> accepts = new ArrayList<>();
            perKey.values().forEach(list -> list.stream()
                    .filter(h -> h.type == AcknowledgeType.ACCEPT && proves(h, list)).forEach(accepts::add));
            accepts.sort(Comparator.comparingLong(h -> h.verdictNs));
            for (int i = 1; i < accepts.size(); i++) {
                if (accepts.get(i).offset <= accepts.get(i - 1).offset) {
                    found.add(accepts.get(i) + " accepted after " + accepts.get(i - 1));
                }
            }
        }
        return found;
    }

    /** The first few findings, for a failure message. */
    static String first(List<String> findings) {
        return String.join("\n", findings.subList(0, Math.min(20, findings.size())));
    }
}
