package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A key's offsets without boxing behave as a deque of ascending longs, across wrap-around and growth. */
class OffsetQueueTest {
    @Test
    void takesAtBothEndsAndGrows() {
        OffsetQueue q = new OffsetQueue();
        q.addLast(10);
        q.addLast(11);
        q.addFirst(9);
        q.addFirst(8);
        q.addLast(12);

        assertThat(q.size()).isEqualTo(5);
        assertThat(q.first()).isEqualTo(8);
        assertThat(q.second()).isEqualTo(9);
        assertThat(q.last()).isEqualTo(12);
        assertThat(q.toString()).isEqualTo("[8, 9, 10, 11, 12]");
    }

    @Test
    void removesFromTheMiddleKeepingOrder() {
        OffsetQueue q = new OffsetQueue();
        for (long o = 1; o <= 5; o++) {
            q.addLast(o);
        }

        assertThat(q.remove(3)).isTrue();
        assertThat(q.remove(42)).isFalse();

        assertThat(q.toString()).isEqualTo("[1, 2, 4, 5]");
    }

    @Test
    void matchesADequeUnderRandomUse() {
        Random random = new Random(7);
        OffsetQueue q = new OffsetQueue();
        ArrayDeque<Long> model = new ArrayDeque<>();
        long low = 1_000_000;
        long high = low;
        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(5);
            if (op == 0 && !model.isEmpty()) {
                assertThat(q.removeFirst()).isEqualTo(model.pollFirst());
            } else if (op == 1) {
                q.addFirst(--low);
                model.addFirst(low);
            } else if (op == 2 && !model.isEmpty()) {
                long victim = model.toArray(new Long[0])[random.nextInt(model.size())];
                assertThat(q.remove(victim)).isTrue();
                model.remove(victim);
            } else {
                q.addLast(++high);
                model.addLast(high);
            }
            assertThat(q.size()).isEqualTo(model.size());
            if (!model.isEmpty()) {
                assertThat(q.first()).isEqualTo(model.peekFirst());
                assertThat(q.last()).isEqualTo(model.peekLast());
            }
        }
    }
}
