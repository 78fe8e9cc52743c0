package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.gateway.StatePartitionAssignor.NodeAddress;
import io.pier.gateway.StatePartitionAssignor.Ownership;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** One probing round at a time, with a probe the test answers. */
class PeerWatchTest {
    private static final NodeAddress N1 = new NodeAddress(1, "127.0.0.1", 9001);
    private static final NodeAddress N2 = new NodeAddress(2, "127.0.0.1", 9002);
    private static final NodeAddress N3 = new NodeAddress(3, "127.0.0.1", 9003);

    private final Set<Integer> refusing = new HashSet<>();
    private final List<Integer> probed = new ArrayList<>();
    private final List<String> removed = new ArrayList<>();
    private Ownership split = new Ownership(Map.of(0, N1, 1, N2, 2, N3), List.of(N1, N2, N3),
            Map.of(1, "m-1", 2, "m-2", 3, "m-3"));
    private final PeerWatch watch = new PeerWatch(1, () -> split, node -> {
        probed.add(node.nodeId());
        return refusing.contains(node.nodeId());
    }, 500, removed::add);

    @Test
    void shouldHaveADeadNodeDroppedAfterTwoRefusalsInARowAndOnlyOnce() {
        // Given node 3's process gone
        refusing.add(3);

        // When the watch probes three times
        assertThat(watch.probeOnce()).isEmpty();
        assertThat(watch.probeOnce()).containsExactly("m-3");
        assertThat(watch.probeOnce()).isEmpty();

        // Then its member was handed on once, and this node never probed itself
        assertThat(removed).containsExactly("m-3");
        assertThat(probed).doesNotContain(1).contains(2, 3);
    }

    @Test
    void shouldStartCountingAgainAfterAnAcceptedConnection() {
        refusing.add(3);
        watch.probeOnce();
        refusing.remove(3); // it was starting, now it listens
        watch.probeOnce();
        refusing.add(3);

        assertThat(watch.probeOnce()).isEmpty();
        assertThat(removed).isEmpty();
    }

    @Test
    void shouldDropARestartedNodeAgainUnderItsNewMemberId() {
        refusing.add(3);
        watch.probeOnce();
        watch.probeOnce();
        // the group dropped m-3; node 3 came back as m-3b, then died again
        split = new Ownership(Map.of(0, N1, 1, N2, 2, N3), List.of(N1, N2, N3), Map.of(1, "m-1", 2, "m-2", 3, "m-3b"));

        watch.probeOnce();
        watch.probeOnce();

        assertThat(removed).containsExactly("m-3", "m-3b");
    }

    @Test
    void shouldNotDropANodeWhoseMemberIdTheSplitDoesNotCarry() {
        // a split made by a node of an older version carries no member ids
        split = new Ownership(Map.of(0, N1), List.of(N1, N2, N3));
        refusing.add(2);

        watch.probeOnce();
        watch.probeOnce();

        assertThat(removed).isEmpty();
    }
}
