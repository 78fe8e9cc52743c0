package io.pier.metrics;

import io.pier.group.ClassicGroupState;
import io.pier.group.ShareGroupState;
import io.pier.group.consumer.ConsumerGroupState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the group metrics show of the groups one shard coordinates, taken on that shard and read
 * from the scrape thread. Immutable.
 *
 * @param groups how many groups are in each type and state; a kind not in the map has none
 * @param classicRebalances generations started by the shard's classic groups since the broker
 *     started
 * @param consumerRebalances group epoch bumps of the shard's consumer-protocol groups since the
 *     broker started
 * @param committed every committed offset of the consumer groups (either protocol) of the shard
 * @param listed every group of the shard with its type and state (for the web console)
 */
public record GroupSnapshot(
        Map<Kind, Integer> groups,
        long classicRebalances,
        long consumerRebalances,
        List<Committed> committed,
        List<Listed> listed) {
    public static final String CLASSIC = "classic";
    public static final String CONSUMER = "consumer";
    public static final String SHARE = "share";

    /**
     * Every type and state a group can be in, each a series of {@code pier_groups} even at zero, so
     * the gauge has a fixed set of series and "no group in PreparingRebalance" reads as 0, not as
     * absent. Taken from the engine's state enums, whose names are Kafka's.
     */
    static final List<Kind> KINDS = kinds();

    /** Nothing coordinated yet: what a shard shows before its first snapshot. */
    static final GroupSnapshot NONE = new GroupSnapshot(Map.of(), 0, 0, List.of(), List.of());

    /** A group type ({@link #CLASSIC}, {@link #CONSUMER}, {@link #SHARE}) and a state as Kafka spells it. */
    public record Kind(String type, String state) {}

    /** One group: its id, type ({@link #CLASSIC}, {@link #CONSUMER}, {@link #SHARE}) and state. */
    public record Listed(String group, String type, String state) {}

    /** One partition's committed offset of one consumer group. */
    public record Committed(String group, String topic, int partition, long offset) {}

    public GroupSnapshot {
        groups = Map.copyOf(groups);
        committed = List.copyOf(committed);
        listed = List.copyOf(listed);
    }

    private static List<Kind> kinds() {
        List<Kind> all = new ArrayList<>();
        for (ClassicGroupState s : ClassicGroupState.values()) {
            all.add(new Kind(CLASSIC, s.toString()));
        }
        for (ConsumerGroupState s : ConsumerGroupState.values()) {
            all.add(new Kind(CONSUMER, s.toString()));
        }
        for (ShareGroupState s : ShareGroupState.values()) {
            all.add(new Kind(SHARE, s.toString()));
        }
        return List.copyOf(all);
    }
}
