package io.pier.share;

import static io.pier.share.AcknowledgeType.ACCEPT;
import static io.pier.share.AcknowledgeType.REJECT;
import static io.pier.share.AcknowledgeType.RELEASE;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** Ordering by key ({@code pier.share.ordering=key}): one holder per key, a key's records in offset order. */
class SharePartitionKeyOrderTest {
    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final long LOCK_MS = 1_000;

    private ShareConfig config = ordered(5);
    /** Record i has key keyOf[i]; 0 is no key. */
    private long[] keyOf = {1, 1, 2, 0, 2, 1};
    private TestLog log = TestLog.ofBatchSizes(2, 2, 2);
    private SharePartition sp = SharePartition.fresh(KEY, 0, 0, () -> config);

    private static ShareConfig ordered(int limit) {
        return new ShareConfig(LOCK_MS, limit, 100, true, false, ReleaseBackoff.NONE, true);
    }

    private RecordKeys keys() {
        return o -> o < keyOf.length ? keyOf[(int) o] : RecordKeys.NO_KEY;
    }

    private List<AcquiredRange> fetch(String member, int max, long nowMs) {
        sp.expireLocks(nowMs);
        if (sp.keysToLearn() > 0) {
            sp.learnKeys(keys());
        }
        long from = sp.nextFetchOffset();
        if (from >= log.endOffset()) {
            return List.of();
        }
        return sp.acquire(member, from, log.read(from), new AcquireLimits(max, 500, AcquireMode.RECORD_LIMIT),
                Isolation.READ_UNCOMMITTED, keys(), nowMs);
    }

    private void ack(String member, long offset, AcknowledgeType type) {
        AckResult r = sp.acknowledge(member, List.of(AckBatch.of(offset, offset, type)), 0);
        assertThat(r.isError()).as("ack %s of %d: %s", type, offset, r.isError() ? r.error() : "").isFalse();
        sp.commit(r.pending());
    }

    private static List<Long> offsets(List<AcquiredRange> ranges) {
        List<Long> out = new ArrayList<>();
        for (AcquiredRange r : ranges) {
            for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                out.add(o);
            }
        }
        return out;
    }

    @Test
    void shouldHandOutOneRecordPerKeyAtATimeAndKeylessOnesFreely() {
        assertThat(offsets(fetch("m1", 10, 0))).as("the first of keys 1 and 2, and the keyless one")
                .containsExactly(0L, 2L, 3L);
        assertThat(offsets(fetch("m2", 10, 1))).as("every other record waits behind its key").isEmpty();
        assertThat(sp.blockedKeys()).as("key 1's record 1 waits in the window; 4 is not read in yet").isEqualTo(1);

        ack("m1", 0, ACCEPT);
        assertThat(offsets(fetch("m2", 10, 2))).containsExactly(1L);
        ack("m1", 2, REJECT);
        assertThat(offsets(fetch("m2", 10, 3))).containsExactly(4L);
        ack("m2", 1, ACCEPT);
        assertThat(offsets(fetch("m2", 10, 4))).containsExactly(5L);
    }

    @Test
    void shouldRedeliverAReleasedRecordBeforeAnythingLaterOfItsKey() {
        fetch("m1", 10, 0);
        ack("m1", 0, RELEASE);
        assertThat(offsets(fetch("m2", 10, 1))).as("0 again, not 1").containsExactly(0L);
        sp.expireLocks(1 + LOCK_MS);
        assertThat(offsets(fetch("m3", 10, 2 + LOCK_MS))).as("after its lock expired: 0 once more, and 2, 3")
                .containsExactly(0L, 2L, 3L);
    }

    @Test
    void shouldLetAPoisonRecordBlockItsKeyOnlyUntilItDies() {
        config = ordered(2);
        fetch("m1", 10, 0);
        ack("m1", 0, RELEASE);
        fetch("m1", 10, 1);
        ack("m1", 0, RELEASE); // second delivery was its last: archived
        assertThat(offsets(fetch("m1", 10, 2))).contains(1L);
    }

    @Test
    void shouldKeepTheRuleAfterALoadOnceTheKeysAreLearned() {
        ShareState stored = new ShareState(0, 0, List.of(
                new PersistedBatch(0, 0, PersistedBatch.AVAILABLE, (short) 1),
                new PersistedBatch(1, 1, PersistedBatch.AVAILABLE, (short) 0),
                new PersistedBatch(2, 2, PersistedBatch.ACKNOWLEDGED, (short) 1)));
        sp = SharePartition.load(KEY, stored, () -> config);

        assertThat(sp.keysToLearn()).isEqualTo(3);
        assertThat(offsets(fetch("m1", 10, 0))).as("1 waits behind 0 (key 1); 4 is key 2's first now")
                .containsExactly(0L, 3L, 4L);
    }

    @Test
    void shouldFlowUnorderedWhenTurnedOff() {
        config = new ShareConfig(LOCK_MS, 5, 100, true);
        assertThat(offsets(fetch("m1", 10, 0))).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    }

    /**
     * Seeded random schedules of fetches by 8 members, ACCEPT / RELEASE / REJECT and lock expiry
     * over 60 keys: at no moment do two records of one key sit ACQUIRED, a key's deliveries never
     * go back in offset order, and everything settles in the end.
     */
    @Test
    void shouldKeepOneHolderPerKeyAndOffsetOrderOnRandomSchedules() {
        for (int seed = 0; seed < 100; seed++) {
            runRandom(seed);
        }
    }

    private void runRandom(int seed) {
        Random random = new Random(seed);
        int records = 400;
        keyOf = new long[records];
        int[] sizes = new int[records / 4];
        for (int i = 0; i < records; i++) {
            keyOf[i] = random.nextInt(10) == 0 ? RecordKeys.NO_KEY : 1 + random.nextInt(60);
        }
        java.util.Arrays.fill(sizes, 4);
        log = TestLog.ofBatchSizes(sizes);
        config = ordered(4);
        sp = SharePartition.fresh(KEY, 0, 0, () -> config);
        Map<Long, Long> lastDelivered = new HashMap<>();
        Map<Long, String> held = new HashMap<>();
        long now = 0;
        for (int step = 0; step < 3_000 && sp.startOffset() < records; step++) {
            now += random.nextInt(200);
            String member = "m" + random.nextInt(8);
            if (random.nextInt(3) == 0 || held.isEmpty()) {
                for (long o : offsets(fetch(member, 1 + random.nextInt(8), now))) {
                    long key = keyOf[(int) o];
                    if (key != RecordKeys.NO_KEY) {
                        assertThat(lastDelivered.getOrDefault(key, -1L)).as("seed %d: key %d order", seed, key)
                                .isLessThanOrEqualTo(o);
                        lastDelivered.put(key, o);
                    }
                    held.put(o, member);
                }
            } else {
                long o = new ArrayList<>(held.keySet()).get(random.nextInt(held.size()));
                String owner = held.remove(o);
                if (sp.stateOf(o) == RecordState.ACQUIRED && owner.equals(sp.ownerOf(o))) {
                    AcknowledgeType type = switch (random.nextInt(6)) {
                        case 0 -> RELEASE;
                        case 1 -> REJECT;
                        default -> ACCEPT;
                    };
                    ack(owner, o, type);
                }
            }
            held.keySet().removeIf(o -> sp.stateOf(o) != RecordState.ACQUIRED);
            checkOneHolderPerKey(seed, records);
        }
        // Drain: one member accepts whatever it gets.
        for (int i = 0; i < 2_000 && sp.startOffset() < records; i++) {
            now += LOCK_MS;
            for (long o : offsets(fetch("drain", 50, now))) {
                ack("drain", o, ACCEPT);
            }
        }
        assertThat(sp.startOffset()).as("seed %d: everything settled", seed).isEqualTo(records);
    }

    private void checkOneHolderPerKey(int seed, int records) {
        Map<Long, Long> holder = new HashMap<>();
        Map<Long, Long> firstUnsettled = new HashMap<>();
        for (long o = sp.startOffset(); o <= sp.endOffset() && o < records; o++) {
            RecordState st = sp.stateOf(o);
            long key = keyOf[(int) o];
            if (st == null || key == RecordKeys.NO_KEY) {
                continue;
            }
            if (!st.isTerminal()) {
                firstUnsettled.putIfAbsent(key, o);
            }
            if (st == RecordState.ACQUIRED) {
                Long other = holder.put(key, o);
                assertThat(other).as("seed %d: key %d held at %s and %d", seed, key, other, o).isNull();
                assertThat(firstUnsettled.get(key)).as("seed %d: %d acquired behind an unsettled record of key %d",
                        seed, o, key).isEqualTo(o);
            }
        }
    }
}
