package io.pier.service;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * Share sessions, keyed by (group, member): the partitions a member fetches from this broker and
 * the epoch its next request must carry. A session belongs to the connection that opened it; when
 * that connection closes, or the client closes the session (epoch -1), {@code onClosed} runs so
 * the member's acquired records are released at once instead of after the lock timeout.
 *
 * <p>Each session lives on the shard of its group (where the group's coordinator is), in that
 * shard's own map; every step runs there. Only the broker-wide session count, which
 * {@code group.share.max.share.sessions} bounds, is shared between shards.
 */
public final class ShareSessions {
    public static final int INITIAL_EPOCH = 0;
    public static final int FINAL_EPOCH = -1;

    public record Key(String groupId, String memberId) {}

    /** A partition of a session, by topic id as share requests name it. */
    public record PartitionRef(Uuid topicId, int partition) {}

    /** An open session. Its partitions are replaced, never mutated, so a snapshot is safe to read. */
    public static final class Session {
        private final Key key;
        private final ClientConnection connection;
        private Runnable closeListener;
        private int nextEpoch = 1;
        private List<PartitionRef> partitions;

        Session(Key key, ClientConnection connection, List<PartitionRef> partitions) {
            this.key = key;
            this.connection = connection;
            this.partitions = List.copyOf(partitions);
        }

        public Key key() {
            return key;
        }

        public List<PartitionRef> partitions() {
            return partitions;
        }

        /** Epochs run 1..Integer.MAX_VALUE and wrap to 1: 0 and -1 open and close sessions. */
        private void advanceEpoch() {
            nextEpoch = nextEpoch == Integer.MAX_VALUE ? 1 : nextEpoch + 1;
        }
    }

    /** Outcome of a session step: an error, or the session's partitions after the step. */
    public record Context(Errors error, List<PartitionRef> partitions, boolean isNew) {
        static Context failed(Errors error) {
            return new Context(error, List.of(), false);
        }
    }

    private final PartitionRegistry shards;
    private final int maxSessions;
    private final Consumer<Session> onClosed;
    /** Per shard id: the sessions of the groups that shard coordinates; each touched only there. */
    private final List<Map<Key, Session>> byShard = new ArrayList<>();
    private final AtomicInteger open = new AtomicInteger();

    ShareSessions(PartitionRegistry shards, int maxSessions, Consumer<Session> onClosed) {
        this.shards = shards;
        this.maxSessions = maxSessions;
        this.onClosed = onClosed;
        for (int i = 0; i < shards.shards().length; i++) {
            byShard.add(new HashMap<>());
        }
    }

    private Shard shardOf(Key key) {
        return shards.shardForKey(key.groupId());
    }

    /**
     * ShareFetch's session step. Epoch 0 replaces any session of the member (its records stay
     * acquired: the client may still acknowledge them on a later session); -1 closes; any other
     * epoch must match, then adds and forgets partitions and moves the epoch on.
     */
    public CompletableFuture<Context> onFetch(Key key, int epoch, Collection<PartitionRef> added,
            Collection<PartitionRef> forgotten, ClientConnection connection) {
        Shard shard = shardOf(key);
        return shard.call(() -> {
            Map<Key, Session> sessions = byShard.get(shard.id());
            Session session = sessions.get(key);
            if (epoch == INITIAL_EPOCH) {
                if (session != null) {
                    remove(sessions, session);
                } else if (open.get() >= maxSessions) {
                    return Context.failed(Errors.SHARE_SESSION_LIMIT_REACHED);
                }
                Session opened = open(shard, sessions, key, connection, new ArrayList<>(new LinkedHashSet<>(added)));
                return new Context(Errors.NONE, opened.partitions, true);
            }
            if (session == null) {
                return Context.failed(Errors.SHARE_SESSION_NOT_FOUND);
            }
            if (epoch == FINAL_EPOCH) {
                return new Context(Errors.NONE, session.partitions, false);
            }
            if (epoch != session.nextEpoch) {
                return Context.failed(Errors.INVALID_SHARE_SESSION_EPOCH);
            }
            LinkedHashSet<PartitionRef> next = new LinkedHashSet<>(session.partitions);
            next.removeAll(forgotten);
            next.addAll(added);
            session.partitions = List.copyOf(next);
            session.advanceEpoch();
            return new Context(Errors.NONE, session.partitions, false);
        });
    }

    /** ShareAcknowledge's session step: it can never open a session; -1 is accepted as is. */
    public CompletableFuture<Context> onAcknowledge(Key key, int epoch) {
        if (epoch == INITIAL_EPOCH) {
            return CompletableFuture.completedFuture(Context.failed(Errors.INVALID_SHARE_SESSION_EPOCH));
        }
        Shard shard = shardOf(key);
        return shard.call(() -> {
            Session session = byShard.get(shard.id()).get(key);
            if (session == null) {
                return Context.failed(Errors.SHARE_SESSION_NOT_FOUND);
            }
            if (epoch != FINAL_EPOCH) {
                if (epoch != session.nextEpoch) {
                    return Context.failed(Errors.INVALID_SHARE_SESSION_EPOCH);
                }
                session.advanceEpoch();
            }
            return new Context(Errors.NONE, session.partitions, false);
        });
    }

    /** Closes the member's session (epoch -1), releasing its records. */
    public CompletableFuture<Void> close(Key key) {
        Shard shard = shardOf(key);
        return shard.call(() -> {
            Map<Key, Session> sessions = byShard.get(shard.id());
            Session session = sessions.get(key);
            if (session != null) {
                remove(sessions, session);
                onClosed.accept(session);
            }
            return null;
        });
    }

    /**
     * Ends, without releasing anything, every session holding a partition {@code moved} names: a
     * gateway node no longer serves those partitions (another node took their state over). The
     * members' next ShareFetch finds no session, opens a new one with what they believe this node
     * leads, and is told which partitions it does not.
     */
    public CompletableFuture<Void> endSessionsWith(java.util.function.Predicate<PartitionRef> moved) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Shard shard : shards.shards()) {
            all.add(shard.call(() -> {
                Map<Key, Session> sessions = byShard.get(shard.id());
                for (Session session : List.copyOf(sessions.values())) {
                    if (session.partitions.stream().anyMatch(moved)) {
                        remove(sessions, session);
                    }
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /** Shard thread only. */
    private void remove(Map<Key, Session> sessions, Session session) {
        if (sessions.remove(session.key, session)) {
            open.decrementAndGet();
            session.connection.removeCloseListener(session.closeListener);
        }
    }

    /** Shard thread only. */
    private Session open(Shard shard, Map<Key, Session> sessions, Key key, ClientConnection connection,
            List<PartitionRef> partitions) {
        Session session = new Session(key, connection, partitions);
        // The connection closes on its event loop; the session is dropped back on its own shard.
        session.closeListener = () -> shard.execute(() -> {
            if (sessions.remove(key, session)) {
                open.decrementAndGet();
                onClosed.accept(session);
            }
        });
        sessions.put(key, session);
        open.incrementAndGet();
        connection.onClose(session.closeListener);
        return session;
    }
}
