package io.pier.state;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One duty cycle's changes to the share state, staged over the published view: each change is
 * validated (an initialised key, a state epoch that is not fenced) and merged with
 * {@link StateBatchCombiner} against what the cycle has staged so far, and encoded as the record
 * that makes it durable (a ShareUpdate, or a ShareSnapshot when {@link SnapshotPolicy} says so).
 * Nothing is visible to readers until {@link #publish}, which the persister calls only after the
 * records are flushed; a failed flush simply drops this object.
 *
 * <p>Owned by the persister's duty cycle; lives for one cycle.
 */
final class ShareStateChanges {
    /** One record to append, and the key whose bookkeeping it updates once it has an offset. */
    record Staged(Object infoKey, boolean full, ShareStateLog.Entry entry) {
        /** The whole state of {@code key}: a ShareSnapshot. */
        static Staged snapshot(SharePartitionKey key, ShareState state) {
            return new Staged(key, true, new ShareStateLog.Entry(
                    ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key),
                    ShareStateRecords.stateValue(state.stateEpoch(), state.startOffset(), state.batches())));
        }

        /** A group record saying the group exists (its full record). */
        static Staged groupExists(String groupId) {
            return new Staged(groupId, true,
                    new ShareStateLog.Entry(ShareStateRecords.groupKey(groupId), ShareStateRecords.groupValue()));
        }
    }

    private final Map<SharePartitionKey, ShareState> published;
    private final Set<String> publishedGroups;
    private final SnapshotPolicy snapshots;
    /** A null value: the key is deleted. */
    private final Map<SharePartitionKey, ShareState> staged = new HashMap<>();
    private final Map<String, Boolean> stagedGroups = new HashMap<>();
    private final List<Staged> records = new ArrayList<>();

    ShareStateChanges(Map<SharePartitionKey, ShareState> published, Set<String> publishedGroups,
            SnapshotPolicy snapshots) {
        this.published = published;
        this.publishedGroups = publishedGroups;
        this.snapshots = snapshots;
    }

    /** Stages a write; returns why it was refused (and stages nothing), or null. */
    RuntimeException write(ShareStateWrite write) {
        SharePartitionKey key = write.key();
        ShareState current = current(key);
        if (current == null) {
            return new IllegalStateException("share state not initialised: " + key.coordinatorKey());
        }
        if (write.stateEpoch() < current.stateEpoch()) {
            return new IllegalStateException("fenced state epoch " + write.stateEpoch() + " < "
                    + current.stateEpoch() + " for " + key.coordinatorKey());
        }
        ShareState next = current.merged(write.stateEpoch(), write.startOffset(), write.batches());
        staged.put(key, next);
        if (snapshots.snapshotDue(key)) {
            records.add(Staged.snapshot(key, next));
        } else {
            records.add(new Staged(key, false, new ShareStateLog.Entry(
                    ShareStateRecords.shareKey(ShareStateRecords.UPDATE, key),
                    ShareStateRecords.stateValue(next.stateEpoch(), next.startOffset(), write.batches()))));
        }
        return null;
    }

    /** Stages a new state at {@code startOffset}, one state epoch above the current one if any. */
    void initialize(SharePartitionKey key, long startOffset) {
        ShareState current = current(key);
        ShareState next = new ShareState(current == null ? 0 : current.stateEpoch() + 1, startOffset, List.of());
        staged.put(key, next);
        records.add(Staged.snapshot(key, next));
    }

    /** Stages the deletion of a key: a null value under its snapshot key. */
    void delete(SharePartitionKey key) {
        staged.put(key, null);
        records.add(new Staged(key, false,
                new ShareStateLog.Entry(ShareStateRecords.shareKey(ShareStateRecords.SNAPSHOT, key), null)));
    }

    /** Stages a group's existence or deletion; nothing if it already is so. */
    void group(String groupId, boolean exists) {
        boolean known = stagedGroups.containsKey(groupId) ? stagedGroups.get(groupId)
                : publishedGroups.contains(groupId);
        if (known == exists) {
            return;
        }
        stagedGroups.put(groupId, exists);
        records.add(exists ? Staged.groupExists(groupId) : new Staged(groupId, false,
                new ShareStateLog.Entry(ShareStateRecords.groupKey(groupId), null)));
    }

    /** The records to append, in staging order. */
    List<Staged> records() {
        return records;
    }

    /** Makes the staged states and groups visible to readers; call only once they are durable. */
    void publish() {
        staged.forEach((k, v) -> {
            if (v == null) {
                published.remove(k);
            } else {
                published.put(k, v);
            }
        });
        stagedGroups.forEach((g, exists) -> {
            if (exists) {
                publishedGroups.add(g);
            } else {
                publishedGroups.remove(g);
            }
        });
    }

    private ShareState current(SharePartitionKey key) {
        return staged.containsKey(key) ? staged.get(key) : published.get(key);
    }
}
