package io.pier.state;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds share state from a {@link ShareStateLog} when {@link DurableSharePersister} opens: from
 * the log's start offset, a snapshot replaces a key's state, an update is merged into it, and a
 * null value deletes it; group records add and remove share groups. The {@link SnapshotPolicy}
 * learns where each key's last full record sits. Runs once, on the opening thread, before the
 * persister's first duty cycle.
 */
final class ShareStateReplay {
    private static final Logger LOG = LoggerFactory.getLogger(ShareStateReplay.class);

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
     *     message names the log and offset)
     */
    static void replay(ShareStateLog log, Map<SharePartitionKey, ShareState> states, Set<String> groups,
            SnapshotPolicy policy) throws IOException {
        new ShareStateReplay(states, groups, policy).replay(log);
    }

    private void replay(ShareStateLog log) throws IOException {
        log.replay((offset, key, value) -> {
            try {
                apply(offset, key, value);
            } catch (RuntimeException e) {
                throw new IOException("undecodable share-state record at offset " + offset + " of "
                        + log.name() + ": " + e.getMessage(), e);
            }
        });
        LOG.info("Share state loaded from {}: {} share-partitions, {} groups, offsets {}..{}", log.name(),
                states.size(), groups.size(), log.startOffset(), log.endOffset());
    }

    private void apply(long offset, ByteBuffer rawKey, ByteBuffer value) {
        ShareStateRecords.Key key = ShareStateRecords.decodeKey(rawKey);
        if (key.type() == ShareStateRecords.GROUP) {
            if (value != null) {
                groups.add(key.groupId());
                policy.onFullRecord(key.groupId(), offset);
            } else {
                groups.remove(key.groupId());
                policy.onDeleted(key.groupId());
            }
            return;
        }
        SharePartitionKey spk = key.partitionKey();
        if (value == null) {
            states.remove(spk);
            policy.onDeleted(spk);
            return;
        }
        ShareState decoded = ShareStateRecords.decodeState(value);
        if (key.type() == ShareStateRecords.SNAPSHOT) {
            states.put(spk, decoded);
            policy.onFullRecord(spk, offset);
            return;
        }
        ShareState current = states.get(spk);
        if (current == null) {
            throw new IllegalStateException("update for " + spk.coordinatorKey() + " without a snapshot");
        }
        states.put(spk, current.merged(decoded.stateEpoch(), decoded.startOffset(), decoded.batches()));
        policy.onUpdate(spk);
    }
}
