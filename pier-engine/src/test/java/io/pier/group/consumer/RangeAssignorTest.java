package io.pier.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.PartitionKey;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

class RangeAssignorTest {
    @Test
    void shouldGiveContiguousRangesWithTheSameNumbersOfCoPartitionedTopics() {
        Uuid a = Uuid.randomUuid();
        Uuid b = Uuid.randomUuid();
        TreeMap<String, Set<Uuid>> subs = new TreeMap<>(Map.of("m1", Set.of(a, b), "m2", Set.of(a, b)));
        Map<String, Set<PartitionKey>> r = new RangeAssignor().assign(subs, Map.of(a, 3, b, 3), Map.of());

        assertThat(r.get("m1")).containsExactlyInAnyOrder(new PartitionKey(a, 0), new PartitionKey(a, 1),
                new PartitionKey(b, 0), new PartitionKey(b, 1));
        assertThat(r.get("m2")).containsExactlyInAnyOrder(new PartitionKey(a, 2), new PartitionKey(b, 2));
    }

    @Test
    void shouldAssignATopicOnlyToItsSubscribers() {
        Uuid a = Uuid.randomUuid();
        Uuid b = Uuid.randomUuid();
        TreeMap<String, Set<Uuid>> subs = new TreeMap<>(Map.of("m1", Set.of(a), "m2", Set.of(b)));
        Map<String, Set<PartitionKey>> r = new RangeAssignor().assign(subs, Map.of(a, 2, b, 1), Map.of());

        assertThat(r.get("m1")).containsExactlyInAnyOrder(new PartitionKey(a, 0), new PartitionKey(a, 1));
        assertThat(r.get("m2")).containsExactly(new PartitionKey(b, 0));
    }
}
