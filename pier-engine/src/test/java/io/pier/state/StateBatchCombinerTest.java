package io.pier.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StateBatchCombinerTest {
    private static final byte AV = PersistedBatch.AVAILABLE;
    private static final byte ACK = PersistedBatch.ACKNOWLEDGED;
    private static final byte ARC = PersistedBatch.ARCHIVED;

    private static PersistedBatch b(long first, long last, byte state, int count) {
        return new PersistedBatch(first, last, state, (short) count);
    }

    @Test
    void shouldPassThroughDisjointBatches() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 4, AV, 1)), List.of(b(10, 12, ACK, 1)), 0);

        assertThat(out).containsExactly(b(0, 4, AV, 1), b(10, 12, ACK, 1));
    }

    @Test
    void shouldMergeTouchingBatchesWithSameValue() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 4, AV, 1)), List.of(b(5, 9, AV, 1)), 0);

        assertThat(out).containsExactly(b(0, 9, AV, 1));
    }

    @Test
    void shouldNotMergeTouchingBatchesWithDifferentValue() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 4, AV, 1)), List.of(b(5, 9, AV, 2)), 0);

        assertThat(out).containsExactly(b(0, 4, AV, 1), b(5, 9, AV, 2));
    }

    @Test
    void shouldGiveOverlapToHigherDeliveryCount() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 9, ARC, 1)), List.of(b(3, 5, AV, 2)), 0);

        // Count beats state: AVAILABLE with count 2 wins over ARCHIVED with count 1.
        assertThat(out).containsExactly(b(0, 2, ARC, 1), b(3, 5, AV, 2), b(6, 9, ARC, 1));
    }

    @Test
    void shouldGiveOverlapToHigherStateWhenCountsEqual() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 9, AV, 1)), List.of(b(5, 14, ACK, 1), b(8, 8, ARC, 1)), 0);

        assertThat(out).containsExactly(b(0, 4, AV, 1), b(5, 7, ACK, 1), b(8, 8, ARC, 1), b(9, 14, ACK, 1));
    }

    @Test
    void shouldKeepLowerPriorityBatchWhenNewOneHasLowerPriority() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 9, ACK, 3)), List.of(b(2, 4, AV, 1)), 0);

        assertThat(out).containsExactly(b(0, 9, ACK, 3));
    }

    @Test
    void shouldMergeOverlappingBatchesWithSameValue() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 6, ACK, 1)), List.of(b(4, 12, ACK, 1)), 0);

        assertThat(out).containsExactly(b(0, 12, ACK, 1));
    }

    @Test
    void shouldPruneAndTrimAgainstStartOffset() {
        List<PersistedBatch> out = StateBatchCombiner.combine(
                List.of(b(0, 4, ACK, 1), b(5, 9, AV, 1)), List.of(b(10, 11, ARC, 2)), 7);

        assertThat(out).containsExactly(b(7, 9, AV, 1), b(10, 11, ARC, 2));
    }

    @Test
    void shouldPruneNothingWhenStartOffsetUnknown() {
        List<PersistedBatch> out = StateBatchCombiner.combine(List.of(b(0, 4, ACK, 1)), List.of(), -1);

        assertThat(out).containsExactly(b(0, 4, ACK, 1));
    }

    @Test
    void shouldMatchPerOffsetMaximumOnRandomInputs() {
        Random random = new Random(42);
        for (int round = 0; round < 500; round++) {
            List<PersistedBatch> a = randomBatches(random);
            List<PersistedBatch> c = randomBatches(random);
            long start = random.nextInt(10);

            List<PersistedBatch> out = StateBatchCombiner.combine(a, c, start);

            PersistedBatch[] expected = new PersistedBatch[60];
            List<PersistedBatch> all = new ArrayList<>(a);
            all.addAll(c);
            for (PersistedBatch x : all) {
                for (long o = Math.max(x.firstOffset(), start); o <= x.lastOffset(); o++) {
                    int i = (int) o;
                    if (expected[i] == null || x.comparePriority(expected[i]) > 0) {
                        expected[i] = x;
                    }
                }
            }
            PersistedBatch[] actual = new PersistedBatch[60];
            long previousLast = -1;
            for (PersistedBatch x : out) {
                assertThat(x.firstOffset()).as("round %d sorted, disjoint", round).isGreaterThan(previousLast);
                previousLast = x.lastOffset();
                for (long o = x.firstOffset(); o <= x.lastOffset(); o++) {
                    actual[(int) o] = x;
                }
            }
            for (int o = 0; o < 60; o++) {
                if (expected[o] == null) {
                    assertThat(actual[o]).as("round %d offset %d", round, o).isNull();
                } else {
                    assertThat(actual[o]).as("round %d offset %d", round, o).isNotNull();
                    assertThat(actual[o].sameValue(expected[o])).as("round %d offset %d", round, o).isTrue();
                }
            }
            for (int i = 1; i < out.size(); i++) {
                PersistedBatch p = out.get(i - 1);
                PersistedBatch n = out.get(i);
                assertThat(p.lastOffset() + 1 == n.firstOffset() && p.sameValue(n))
                        .as("round %d: touching equal batches merged", round).isFalse();
            }
        }
    }

    private static List<PersistedBatch> randomBatches(Random random) {
        byte[] states = {AV, ACK, ARC};
        List<PersistedBatch> out = new ArrayList<>();
        int n = random.nextInt(5);
        for (int i = 0; i < n; i++) {
            long first = random.nextInt(50);
            long last = first + random.nextInt(8);
            out.add(b(first, last, states[random.nextInt(3)], 1 + random.nextInt(3)));
        }
        return out;
    }
}
