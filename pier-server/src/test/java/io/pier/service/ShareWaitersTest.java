package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.Wakeup;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/** Parked share fetches are woken one at a time, never lost, by acquisitions and by the log alike. */
class ShareWaitersTest {
    private final Partition partition = new Partition(new TopicPartition("t", 0), Uuid.randomUuid(),
            new Shard(0, Wakeup.NONE, (what, cause) -> { }), null);
    private final ShareWaiters waiters = new ShareWaiters(partition);
    private final List<String> woken = new ArrayList<>();

    /** A parked fetch: done once woken, as a poll answered by its next attempt would be. */
    private final class Fetch implements Partition.DataListener {
        final String name;
        boolean done;

        Fetch(String name) {
            this.name = name;
        }

        @Override
        public boolean isDone() {
            return done;
        }

        @Override
        public void onDataChange() {
            woken.add(name);
        }
    }

    @Test
    void wakesOneAtATimeInParkingOrder() {
        waiters.park(new Fetch("a"));
        waiters.park(new Fetch("b"));
        waiters.park(new Fetch("c"));

        assertThat(waiters.wakeOne()).isTrue();
        assertThat(woken).containsExactly("a");
        assertThat(waiters.wakeOne()).isTrue();
        assertThat(woken).containsExactly("a", "b");
        assertThat(waiters.parkedCount()).isOne();
    }

    @Test
    void skipsFetchesAnsweredMeanwhile() {
        Fetch a = new Fetch("a");
        waiters.park(a);
        waiters.park(new Fetch("b"));
        a.done = true;

        waiters.wakeOne();

        assertThat(woken).containsExactly("b");
        assertThat(waiters.wakeOne()).isFalse();
    }

    @Test
    void aFetchParksOnceHoweverOftenItFindsNothing() {
        Fetch a = new Fetch("a");
        waiters.park(a);
        waiters.park(new Fetch("b"));
        waiters.park(a);

        waiters.wakeAll();

        assertThat(woken).containsExactly("a", "b");
    }

    @Test
    void newRecordsWakeOneAndTheRestStayListening() {
        waiters.park(new Fetch("a"));
        waiters.park(new Fetch("b"));

        partition.fireDataListeners();
        assertThat(woken).containsExactly("a");

        // Still registered for the one left: the next change of the log reaches it.
        partition.fireDataListeners();
        assertThat(woken).containsExactly("a", "b");

        partition.fireDataListeners();
        assertThat(woken).containsExactly("a", "b");
    }

    @Test
    void parkingAfterTheLogFiredListensAgain() {
        waiters.park(new Fetch("a"));
        partition.fireDataListeners();
        waiters.park(new Fetch("b"));

        partition.fireDataListeners();

        assertThat(woken).containsExactly("a", "b");
    }

    @Test
    void aDeletedPartitionWakesEveryone() {
        waiters.park(new Fetch("a"));
        waiters.park(new Fetch("b"));
        waiters.park(new Fetch("c"));

        partition.markDeleted();

        assertThat(woken).containsExactly("a", "b", "c");
    }

    @Test
    void answeredFetchesAreDroppedOnceManyPiledUp() {
        for (int i = 0; i < 100; i++) {
            Fetch f = new Fetch("f" + i);
            waiters.park(f);
            f.done = true; // answered by its MaxWaitMs on an idle partition
        }
        assertThat(waiters.parkedCount()).isLessThanOrEqualTo(64);
        waiters.park(new Fetch("live"));

        partition.fireDataListeners();

        assertThat(woken).containsExactly("live");
    }
}
