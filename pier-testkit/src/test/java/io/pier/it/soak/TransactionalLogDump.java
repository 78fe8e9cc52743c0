package io.pier.it.soak;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;

/**
 * The batch headers of a partition's segment files around some offsets, end markers with their
 * type: what a read_committed violation needs and a consumer cannot show (it never hands out
 * control batches, nor the producer id and epoch of a batch). Read from the files of a broker
 * that has closed, so nothing writes them meanwhile.
 */
final class TransactionalLogDump {
    /** Batches shown before the first offset asked about and after the last. */
    private static final long BEFORE = 20;
    private static final long AFTER = 40;

    private TransactionalLogDump() {}

    /**
     * One line per batch of {@code tp} under {@code dataDir} that holds an offset in
     * {@code [from - BEFORE, to + AFTER]}.
     */
    static List<String> around(Path dataDir, TopicPartition tp, long from, long to) {
        List<String> out = new ArrayList<>();
        Path dir = dataDir.resolve("logs").resolve(tp.topic() + "-" + tp.partition());
        List<Path> segments = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.log")) {
            ds.forEach(segments::add);
        } catch (IOException e) {
            out.add("cannot list " + dir + ": " + e);
            return out;
        }
        segments.sort(null);
        for (Path segment : segments) {
            try (FileRecords records = FileRecords.open(segment.toFile(), false)) {
                for (FileChannelRecordBatch b : records.batches()) {
                    if (b.lastOffset() >= from - BEFORE && b.baseOffset() <= to + AFTER) {
                        out.add(describe(b));
                    }
                }
            } catch (IOException | RuntimeException e) {
                out.add("cannot read " + segment + ": " + e);
            }
        }
        return out;
    }

    private static String describe(FileChannelRecordBatch b) {
        StringBuilder s = new StringBuilder().append(b.baseOffset()).append("..").append(b.lastOffset())
                .append(" producer ").append(b.producerId()).append(" epoch ").append(b.producerEpoch())
                .append(" seq ").append(b.baseSequence());
        if (b.isControlBatch()) {
            s.append(" control ").append(marker(b));
        } else {
            s.append(b.isTransactional() ? " transactional" : " plain");
        }
        return s.toString();
    }

    private static String marker(FileChannelRecordBatch b) {
        try {
            Iterator<Record> it = b.iterator();
            if (!it.hasNext()) {
                return "(empty)";
            }
            Record r = it.next();
            ControlRecordType type = ControlRecordType.parse(r.key());
            if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                return type + " coordinator epoch " + EndTransactionMarker.deserialize(r).coordinatorEpoch();
            }
            return type.toString();
        } catch (RuntimeException e) {
            return "(undecodable: " + e + ")";
        }
    }
}
