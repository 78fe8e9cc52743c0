package io.pier.state;

import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The share-partition state and which share groups exist: what a broker's share engine keeps
 * durable. One {@link DurableSharePersister} on a broker; on a gateway, one per upstream state
 * partition it owns, behind one store that routes each key to its partition.
 */
public interface ShareStateStore extends SharePersister {
    /** Makes the existence of a share group durable; completes at once if it already is. */
    CompletableFuture<Void> recordGroup(String groupId);

    /** Makes the deletion of a share group durable. */
    CompletableFuture<Void> deleteGroup(String groupId);

    /** The share groups whose existence is durable; any thread. */
    Set<String> groups();
}
