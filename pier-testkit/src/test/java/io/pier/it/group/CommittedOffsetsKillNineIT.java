package io.pier.it.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ChildBroker;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Committed offsets and their metadata survive SIGKILL: a broker in a child process takes commits
 * from several groups (small log segments, so compaction has old segments to free), is killed right
 * after the last commit was acknowledged, and after each restart every group reads back exactly
 * its last acknowledged offset and metadata.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class CommittedOffsetsKillNineIT {
    private static final String TOPIC = "kill-nine-offsets";
    private static final int PARTITIONS = 3;
    private static final int GROUPS = 4;
    private static final int KILLS = 3;
    private static final int COMMITS_PER_CYCLE = 60;

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    @Test
    void shouldKeepEveryAcknowledgedCommitAcrossKillNine() throws Exception {
        try (ChildBroker broker = new ChildBroker(dataDir, scratch, "pier.offsets.segment.bytes=4096",
                "pier.offsets.compaction.interval.ms=200")) {
            broker.start(0);
            Map<String, Map<TopicPartition, OffsetAndMetadata>> acked = new HashMap<>();
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            }
            long next = 0;
            for (int cycle = 1; cycle <= KILLS; cycle++) {
                // Given commits from several groups, each acknowledged before the next
                try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                    for (int i = 0; i < COMMITS_PER_CYCLE; i++, next++) {
                        String group = "group-" + (next % GROUPS);
                        TopicPartition tp = new TopicPartition(TOPIC, (int) (next % PARTITIONS));
                        OffsetAndMetadata offset = new OffsetAndMetadata(next, "cycle " + cycle + " commit " + next);
                        admin.alterConsumerGroupOffsets(group, Map.of(tp, offset)).all().get();
                        acked.computeIfAbsent(group, g -> new HashMap<>()).put(tp, offset);
                    }
                }

                // When the broker is SIGKILLed and restarted on the same data
                assertThat(broker.kill()).as("broker died").isTrue();
                broker.start(cycle);

                // Then every group reads back exactly what was acknowledged
                try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                    for (var e : acked.entrySet()) {
                        Map<TopicPartition, OffsetAndMetadata> read =
                                admin.listConsumerGroupOffsets(e.getKey()).partitionsToOffsetAndMetadata().get();
                        assertThat(read).as("offsets of %s after kill %d", e.getKey(), cycle)
                                .containsExactlyInAnyOrderEntriesOf(e.getValue());
                    }
                }
            }
        }
    }
}
