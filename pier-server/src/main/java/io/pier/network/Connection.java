package io.pier.network;

import io.netty.handler.ssl.SslHandler;
import io.pier.service.ClientConnection;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/** What handlers may know about the client connection a request came on. */
final class Connection implements ClientConnection {
    private final String id;
    private final InetSocketAddress remote;
    private final String listenerName;
    private final SslHandler tls;
    private final List<Runnable> closeListeners = new CopyOnWriteArrayList<>();
    private volatile boolean closed;
    /** Set on the connection's event loop (SASL, TLS handshake); read by handlers on any thread. */
    private volatile KafkaPrincipal principal = KafkaPrincipal.ANONYMOUS;

    Connection(String id, InetSocketAddress remote, String listenerName, SslHandler tls) {
        this.id = id;
        this.remote = remote;
        this.listenerName = listenerName;
        this.tls = tls;
    }

    @Override
    public String listenerName() {
        return listenerName;
    }

    /** The client certificate's subject, once the TLS handshake has checked it; null otherwise. */
    @Override
    public Principal peerPrincipal() {
        if (tls == null || !tls.handshakeFuture().isSuccess()) {
            return null;
        }
        try {
            return tls.engine().getSession().getPeerPrincipal();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    @Override
    public KafkaPrincipal principal() {
        return principal;
    }

    /** The identity the client proved, for every request after this one. */
    void authenticated(KafkaPrincipal who) {
        this.principal = who;
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

    @Override
    public boolean isClosed() {
        return closed;
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
