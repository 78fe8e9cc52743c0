package io.pier.server;

import io.pier.network.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;

/**
 * Share sessions, keyed by (group, member): the partitions a member fetches from this broker and
 * the epoch its next request must carry. A session belongs to the connection that opened it; when
 * that connection closes, or the client closes the session (epoch -1), {@code onClosed} runs so
 * the member's acquired records are released at once instead of after the lock timeout.
 *
 * <p>Guarded by its own monitor: sessions are touched from every connection's event loop.
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
        private final Connection connection;
        private final Runnable closeListener;
        private int nextEpoch = 1;
        private List<PartitionRef> partitions;

        Session(Key key, Connection connection, List<PartitionRef> partitions, Runnable closeListener) {
            this.key = key;
            this.connection = connection;
            this.partitions = List.copyOf(partitions);
            this.closeListener = closeListener;
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

    private final int maxSessions;
    private final Consumer<Session> onClosed;
    private final Map<Key, Session> sessions = new HashMap<>();

    ShareSessions(int maxSessions, Consumer<Session> onClosed) {
        this.maxSessions = maxSessions;
        this.onClosed = onClosed;
    }

    /**
     * ShareFetch's session step. Epoch 0 replaces any session of the member (its records stay
     * acquired: the client may still acknowledge them on a later session); -1 closes; any other
     * epoch must match, then adds and forgets partitions and moves the epoch on.
     */
    public Context onFetch(Key key, int epoch, Collection<PartitionRef> added,
            Collection<PartitionRef> forgotten, Connection connection) {
        Session replaced = null;
        Context result;
        synchronized (this) {
            Session session = sessions.get(key);
            if (epoch == INITIAL_EPOCH) {
                if (session != null) {
                    sessions.remove(key);
                    replaced = session;
                } else if (sessions.size() >= maxSessions) {
                    return Context.failed(Errors.SHARE_SESSION_LIMIT_REACHED);
                }
                Session opened = open(key, connection, new ArrayList<>(new LinkedHashSet<>(added)));
                result = new Context(Errors.NONE, opened.partitions, true);
            } else if (session == null) {
                return Context.failed(Errors.SHARE_SESSION_NOT_FOUND);
            } else if (epoch == FINAL_EPOCH) {
                result = new Context(Errors.NONE, session.partitions, false);
            } else if (epoch != session.nextEpoch) {
                return Context.failed(Errors.INVALID_SHARE_SESSION_EPOCH);
            } else {
                LinkedHashSet<PartitionRef> next = new LinkedHashSet<>(session.partitions);
                next.removeAll(forgotten);
                next.addAll(added);
                session.partitions = List.copyOf(next);
                session.advanceEpoch();
                result = new Context(Errors.NONE, session.partitions, false);
            }
        }
        if (replaced != null) {
            replaced.connection.removeCloseListener(replaced.closeListener);
        }
        return result;
    }

    /** ShareAcknowledge's session step: it can never open a session; -1 is accepted as is. */
    public Context onAcknowledge(Key key, int epoch) {
        synchronized (this) {
            if (epoch == INITIAL_EPOCH) {
                return Context.failed(Errors.INVALID_SHARE_SESSION_EPOCH);
            }
            Session session = sessions.get(key);
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
        }
    }

    /** Closes the member's session (epoch -1), releasing its records. */
    public void close(Key key) {
        Session session;
        synchronized (this) {
            session = sessions.remove(key);
        }
        if (session != null) {
            session.connection.removeCloseListener(session.closeListener);
            onClosed.accept(session);
        }
    }

    private Session open(Key key, Connection connection, List<PartitionRef> partitions) {
        Session[] holder = new Session[1];
        Runnable onConnectionClosed = () -> {
            boolean removed;
            synchronized (this) {
                removed = sessions.remove(key, holder[0]);
            }
            if (removed) {
                onClosed.accept(holder[0]);
            }
        };
        Session session = new Session(key, connection, partitions, onConnectionClosed);
        holder[0] = session;
        sessions.put(key, session);
        connection.onClose(onConnectionClosed);
        return session;
    }
}
