package io.pier.state;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When the share-state log writes a key whole, and how far its start may move. Per key (a
 * {@link SharePartitionKey}, or a share group's id) it tracks the offset of the key's last full
 * record (a snapshot, or a group record) and the updates appended since:
 *
 * <ul>
 *   <li>a write becomes a snapshot once the key has {@code updatesPerSnapshot - 1} updates since
 *       its last full record;
 *   <li>a cold pass re-snapshots every key whose last full record lies before the end the previous
 *       pass saw, so that quiet keys do not pin old segments;
 *   <li>the log start may move to the oldest last-full-record offset still needed.
 * </ul>
 *
 * Owned by the persister's duty cycle (and by {@link DurableSharePersister#open}, before the first
 * cycle).
 */
final class SnapshotPolicy {
    /** Where a key's full record sits, and updates since it. */
    private static final class KeyInfo {
        long lastFullOffset;
        int updatesSinceFull;
    }

    private final int updatesPerSnapshot;
    private final Map<Object, KeyInfo> keys = new HashMap<>();
    private long coldPassEnd;

    SnapshotPolicy(int updatesPerSnapshot) {
        this.updatesPerSnapshot = updatesPerSnapshot;
    }

    /** True when the next write of {@code key} should be a whole snapshot rather than an update. */
    boolean snapshotDue(SharePartitionKey key) {
        return keys.computeIfAbsent(key, k -> new KeyInfo()).updatesSinceFull + 1 >= updatesPerSnapshot;
    }

    /** A full record of {@code key} now sits at {@code offset}. */
    void onFullRecord(Object key, long offset) {
        KeyInfo info = keys.computeIfAbsent(key, k -> new KeyInfo());
        info.lastFullOffset = offset;
        info.updatesSinceFull = 0;
    }

    /** An update of {@code key} was appended after its last full record. */
    void onUpdate(Object key) {
        keys.computeIfAbsent(key, k -> new KeyInfo()).updatesSinceFull++;
    }

    /** {@code key} was deleted: nothing of it is needed any more. */
    void onDeleted(Object key) {
        keys.remove(key);
    }

    /** Where the first cold pass starts counting from: the log start when the log was opened. */
    void startColdPassesAt(long offset) {
        coldPassEnd = offset;
    }

    /** The keys whose last full record is older than the end the previous cold pass saw. */
    List<Object> coldKeys() {
        List<Object> cold = new ArrayList<>();
        keys.forEach((key, info) -> {
            if (info.lastFullOffset < coldPassEnd) {
                cold.add(key);
            }
        });
        return cold;
    }

    /** Ends a cold pass that saw the log up to {@code logEndOffset}. */
    void endColdPass(long logEndOffset) {
        coldPassEnd = logEndOffset;
    }

    /** The oldest offset any key still needs, at most {@code highWatermark}. */
    long neededFrom(long highWatermark) {
        long needed = highWatermark;
        for (KeyInfo info : keys.values()) {
            needed = Math.min(needed, info.lastFullOffset);
        }
        return needed;
    }
}
