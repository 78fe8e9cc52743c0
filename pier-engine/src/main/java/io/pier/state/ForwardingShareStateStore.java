package io.pier.state;

import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A share-state store that passes every call to another: the base of a wrapper that changes a
 * few of them (the release backoffs' clock, a test's refusal) and leaves the rest as they are.
 */
public abstract class ForwardingShareStateStore implements ShareStateStore {
    private final ShareStateStore store;

    protected ForwardingShareStateStore(ShareStateStore store) {
        this.store = store;
    }

    @Override
    public CompletableFuture<Void> write(ShareStateWrite write) {
        return store.write(write);
    }

    @Override
    public ShareState read(SharePartitionKey key) {
        return store.read(key);
    }

    @Override
    public CompletableFuture<Void> initialize(SharePartitionKey key, long startOffset) {
        return store.initialize(key, startOffset);
    }

    @Override
    public CompletableFuture<Void> delete(SharePartitionKey key) {
        return store.delete(key);
    }

    @Override
    public Set<SharePartitionKey> keys() {
        return store.keys();
    }

    @Override
    public boolean serves(SharePartitionKey key) {
        return store.serves(key);
    }

    @Override
    public CompletableFuture<Void> recordGroup(String groupId) {
        return store.recordGroup(groupId);
    }

    @Override
    public CompletableFuture<Void> deleteGroup(String groupId) {
        return store.deleteGroup(groupId);
    }

    @Override
    public Set<String> groups() {
        return store.groups();
    }
}
