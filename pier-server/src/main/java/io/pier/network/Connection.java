package io.pier.network;

import io.pier.service.ClientConnection;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What handlers may know about the client connection a request came on. */
final class Connection implements ClientConnection {
    private final String id;
    private final InetSocketAddress remote;
    private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    Connection(String id, InetSocketAddress remote) {
        this.id = id;
        this.remote = remote;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    /** Runs once when the connection closes (at once if it already has). Share sessions use it. */
    @Override
    public void onClose(Runnable listener) {
        closeListeners.add(listener);
        if (closed && closeListeners.remove(listener)) {
            listener.run();
        }
    }

    @Override
    public void removeCloseListener(Runnable listener) {
        closeListeners.remove(listener);
    }

    void markClosed() {
        closed = true;
        for (Runnable r : closeListeners) {
            if (closeListeners.remove(r)) {
                r.run();
            }
        }
    }
}
