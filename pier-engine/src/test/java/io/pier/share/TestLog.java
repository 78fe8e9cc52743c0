package io.pier.share;

import java.util.ArrayList;
import java.util.List;

/** A pretend partition log: just batch boundaries, as the share engine sees a log read. */
final class TestLog {
    final List<LogBatch> batches = new ArrayList<>();

    static TestLog ofBatchSizes(int... sizes) {
        TestLog log = new TestLog();
        long next = 0;
        for (int size : sizes) {
            log.batches.add(new LogBatch(next, next + size - 1));
            next += size;
        }
        return log;
    }

    long endOffset() {
        return batches.isEmpty() ? 0 : batches.get(batches.size() - 1).lastOffset() + 1;
    }

    /** Batches from the one holding {@code fetchOffset} on, as a log read returns them. */
    List<LogBatch> read(long fetchOffset) {
        List<LogBatch> out = new ArrayList<>();
        for (LogBatch b : batches) {
            if (b.lastOffset() >= fetchOffset) {
                out.add(b);
            }
        }
        return out;
    }
}
