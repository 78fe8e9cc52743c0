package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.gateway.StatePartitionAssignor.NodeAddress;
import io.pier.gateway.StatePartitionAssignor.Ownership;
import io.pier.service.NodeInfo;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a node tells clients of the split, before and after it withdraws from it. */
class GatewayClusterTest {
    private static final NodeAddress N1 = new NodeAddress(1, "127.0.0.1", 9001);
    private static final NodeAddress N2 = new NodeAddress(2, "127.0.0.1", 9002);

    private final GatewayCluster cluster = new GatewayCluster(() -> new NodeInfo(1, "127.0.0.1", 9001, "c"), 2,
            null);

    @Test
    void shouldNameNoCoordinatorForItsOwnStatePartitionsOnceWithdrawnUntilTheNextSplit() {
        // Given a split giving state partition 0 to this node (1) and 1 to node 2
        Ownership split = new Ownership(Map.of(0, N1, 1, N2), List.of(N1, N2), Map.of(1, "m-1", 2, "m-2"));
        cluster.update(split);
        String mine = keyOf(0);
        String theirs = keyOf(1);
        assertThat(cluster.coordinator(mine, null).nodeId()).isEqualTo(1);
        assertThat(cluster.withdrawn()).isFalse();

        // When this node withdraws (no answer from the upstream)
        cluster.withdraw();

        // Then it names no coordinator for what was its own, still node 2 for the rest, and keeps
        // every node and member id; the next split ends the withdrawal
        assertThat(cluster.withdrawn()).isTrue();
        assertThat(cluster.coordinator(mine, null)).isNull();
        assertThat(cluster.coordinator(theirs, null).nodeId()).isEqualTo(2);
        assertThat(cluster.ownership().nodes()).containsExactly(N1, N2);
        assertThat(cluster.ownership().memberIds()).containsEntry(2, "m-2");
        cluster.update(split);
        assertThat(cluster.withdrawn()).isFalse();
        assertThat(cluster.coordinator(mine, null).nodeId()).isEqualTo(1);
    }

    /** A group id whose state partition (of 2) is {@code p}. */
    private static String keyOf(int p) {
        for (int i = 0; i < 1_000; i++) {
            if (PartitionedShareState.partitionOf("g" + i, 2) == p) {
                return "g" + i;
            }
        }
        throw new AssertionError("no key for state partition " + p);
    }
}
