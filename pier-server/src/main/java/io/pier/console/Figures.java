package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.LogSnapshot;
import io.pier.metrics.SharePartitionSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * Sums over the snapshots the shards publish for the metrics: per share group, per consumer group,
 * per topic. O(snapshots), never O(records).
 */
final class Figures {
    private Figures() {}

    /** A share group's share-partitions added up: lag summed, the oldest age the largest. */
    record ShareGroupFigures(int sharePartitions, long lag, long oldestUnacknowledgedAgeMs, long acquired,
            long archived, long deadLetters, long blockedKeys) {
        static final ShareGroupFigures NONE = new ShareGroupFigures(0, 0, 0, 0, 0, 0, 0);

        ShareGroupFigures plus(SharePartitionSnapshot s) {
            return new ShareGroupFigures(sharePartitions + 1, lag + s.lag(),
                    Math.max(oldestUnacknowledgedAgeMs, s.oldestUnacknowledgedAgeMs()), acquired + s.acquired(),
                    archived + s.counts().archivedRejected() + s.counts().archivedDeliveryLimit()
                            + s.counts().archivedLogStart(),
                    deadLetters + s.counts().deadLetters(), blockedKeys + s.blockedKeys());
        }
    }

    /** One committed offset of a consumer group with the partition's high watermark; -1 if unknown. */
    record CommittedRow(String group, TopicPartition partition, long committed, long highWatermark) {
        /** High watermark - committed offset, never below 0; 0 while the high watermark is unknown. */
        long lag() {
            return highWatermark < 0 ? 0 : Math.max(0, highWatermark - committed);
        }
    }

    /** A topic's partitions added up. */
    record TopicFigures(int partitions, long sizeBytes, long records) {
        TopicFigures plus(LogSnapshot l) {
            return new TopicFigures(partitions + 1, sizeBytes + l.sizeBytes(),
                    records + Math.max(0, l.endOffset() - l.startOffset()));
        }
    }

    static Map<String, ShareGroupFigures> byShareGroup(List<SharePartitionSnapshot> shares) {
        Map<String, ShareGroupFigures> out = new HashMap<>();
        for (SharePartitionSnapshot s : shares) {
            out.put(s.group(), out.getOrDefault(s.group(), ShareGroupFigures.NONE).plus(s));
        }
        return out;
    }

    static Map<String, TopicFigures> byTopic(List<LogSnapshot> logs) {
        Map<String, TopicFigures> out = new TreeMap<>();
        for (LogSnapshot l : logs) {
            out.put(l.topic(), out.getOrDefault(l.topic(), new TopicFigures(0, 0, 0)).plus(l));
        }
        return out;
    }

    static Map<TopicPartition, Long> highWatermarks(List<LogSnapshot> logs) {
        Map<TopicPartition, Long> out = new HashMap<>();
        for (LogSnapshot l : logs) {
            out.put(new TopicPartition(l.topic(), l.partition()), l.highWatermark());
        }
        return out;
    }

    /** Every committed offset of every consumer group, joined with its partition's high watermark. */
    static List<CommittedRow> committed(List<GroupSnapshot> groups, List<LogSnapshot> logs) {
        Map<TopicPartition, Long> highWatermarks = highWatermarks(logs);
        List<CommittedRow> out = new ArrayList<>();
        for (GroupSnapshot g : groups) {
            for (GroupSnapshot.Committed c : g.committed()) {
                TopicPartition tp = new TopicPartition(c.topic(), c.partition());
                out.add(new CommittedRow(c.group(), tp, c.offset(), highWatermarks.getOrDefault(tp, -1L)));
            }
        }
        return out;
    }

    /** Each consumer group's lag over the partitions it committed offsets for. */
    static Map<String, Long> consumerLag(List<CommittedRow> committed) {
        Map<String, Long> out = new HashMap<>();
        for (CommittedRow c : committed) {
            out.merge(c.group(), c.lag(), Long::sum);
        }
        return out;
    }

    /** Every group of every shard. */
    static List<GroupSnapshot.Listed> listed(List<GroupSnapshot> groups) {
        List<GroupSnapshot.Listed> out = new ArrayList<>();
        groups.forEach(g -> out.addAll(g.listed()));
        return out;
    }
}
