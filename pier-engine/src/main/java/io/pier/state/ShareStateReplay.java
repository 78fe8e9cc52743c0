package io.pier.state;

import io.pier.log.LogReadResult;
import io.pier.log.PartitionLog;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds share state from the share-state log when {@link DurableSharePersister} opens: from the
 * log start offset, a snapshot replaces a key's state, an update is merged into it, and a null
 * value deletes it; group records add and remove share groups. The {@link SnapshotPolicy} learns
 * where each key's last full record sits. Runs once, before the writer thread starts.
 */
final class ShareStateReplay {
    private static final Logger LOG = LoggerFactory.getLogger(ShareStateReplay.class);
    private static final int READ_BYTES = 1024 * 1024;

    private final Map<SharePartitionKey, ShareState> states;
    private final Set<String> groups;
    private final SnapshotPolicy policy;

    private ShareStateReplay(Map<SharePartitionKey, ShareState> states, Set<String> groups, SnapshotPolicy policy) {
        this.states = states;
        this.groups = groups;
        this.policy = policy;
    }

    /**
     * Replays {@code log} into {@code states}, {@code groups} and {@code policy}.
     *
     * @throws IOException if the log cannot be read or holds a record that does not decode (the
     *     message names the file and offset)
     */
    static void replay(PartitionLog log, Map<SharePartitionKey, ShareState> states, Set<String> groups,
            SnapshotPolicy policy) throws IOException {
        new ShareStateReplay(states, groups, policy).replay(log);
    }

    private void replay(PartitionLog log) throws IOException {
        long offset = log.logStartOffset();
        long end = log.highWatermark();
        while (offset < end) {
            LogReadResult read = log.read(offset, READ_BYTES, true);
            long before = offset;
            for (RecordBatch batch : read.records().batches()) {
                for (Record r : batch) {
                    if (r.offset() < offset) {
                        continue;
                    }
                    try {
                        apply(r);
                    } catch (RuntimeException e) {
                        throw new IOException("undecodable share-state record at offset " + r.offset() + " of "
                                + log.dir() + ": " + e.getMessage(), e);
                    }
                }
                offset = batch.lastOffset() + 1;
            }
            if (offset == before) {
                throw new IOException("share-state log " + log.dir() + " made no progress at offset " + offset);
            }
        }
        LOG.info("Share state loaded from {}: {} share-partitions, {} groups, offsets {}..{}", log.dir(),
                states.size(), groups.size(), log.logStartOffset(), end);
    }

    private void apply(Record r) {
        ShareStateRecords.Key key = ShareStateRecords.decodeKey(r.key());
        if (key.type() == ShareStateRecords.GROUP) {
            if (r.hasValue()) {
                groups.add(key.groupId());
                policy.onFullRecord(key.groupId(), r.offset());
            } else {
                groups.remove(key.groupId());
                policy.onDeleted(key.groupId());
            }
            return;
        }
        SharePartitionKey spk = key.partitionKey();
        if (!r.hasValue()) {
            states.remove(spk);
            policy.onDeleted(spk);
            return;
        }
        ShareState value = ShareStateRecords.decodeState(r.value());
        if (key.type() == ShareStateRecords.SNAPSHOT) {
            states.put(spk, value);
            policy.onFullRecord(spk, r.offset());
            return;
        }
        ShareState current = states.get(spk);
        if (current == null) {
            throw new IllegalStateException("update for " + spk.coordinatorKey() + " without a snapshot");
        }
        states.put(spk, current.merged(value.stateEpoch(), value.startOffset(), value.batches()));
        policy.onUpdate(spk);
    }
}
