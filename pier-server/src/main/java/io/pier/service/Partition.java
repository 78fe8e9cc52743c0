package io.pier.service;

import io.pier.log.PartitionLog;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/**
 * A topic-partition on this broker: its log and the shard that owns it. Every method except the
 * accessors of final fields must run on {@link #shard()}'s thread. Only the services in this
 * package see the log and the shard; the protocol layer sees {@link DataListener} alone.
 */
public final class Partition {
    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final Shard shard;
    private final PartitionLog log;
    private List<DataListener> dataListeners = new ArrayList<>();
    private boolean deleted;
    /** Moving average of bytes per record read from this log, to size share-fetch reads. */
    private double bytesPerRecord = 1024;

    Partition(TopicPartition topicPartition, Uuid topicId, Shard shard, PartitionLog log) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.shard = shard;
        this.log = log;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    Shard shard() {
        return shard;
    }

    PartitionLog log() {
        return log;
    }

    /** Shard thread only. */
    double bytesPerRecord() {
        return bytesPerRecord;
    }

    /** Shard thread only: folds one read into the bytes-per-record estimate. */
    void observeRecordSize(long bytes, long records) {
        if (records > 0 && bytes > 0) {
            bytesPerRecord = 0.8 * bytesPerRecord + 0.2 * ((double) bytes / records);
        }
    }

    public boolean isDeleted() {
        return deleted;
    }

    void markDeleted() {
        deleted = true;
        fireDataListeners();
    }

    /** A one-shot wake-up for a parked long poll; one that is done no longer needs calling. */
    public interface DataListener {
        boolean isDone();

        void onDataChange();
    }

    /**
     * Shard thread only. Calls {@code listener} once, the next time readable data may have changed
     * (high watermark advanced, log start moved, partition deleted). Long polls use it.
     */
    void onNextDataChange(DataListener listener) {
        if (dataListeners.size() >= 64) {
            // Polls that timed out on an idle partition leave their listeners behind.
            dataListeners.removeIf(DataListener::isDone);
        }
        dataListeners.add(listener);
    }

    /** Shard thread only. */
    void fireDataListeners() {
        if (dataListeners.isEmpty()) {
            return;
        }
        List<DataListener> fired = dataListeners;
        dataListeners = new ArrayList<>();
        for (DataListener l : fired) {
            if (!l.isDone()) {
                l.onDataChange();
            }
        }
    }
}
