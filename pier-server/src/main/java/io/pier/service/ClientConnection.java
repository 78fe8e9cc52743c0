package io.pier.service;

import java.net.InetSocketAddress;
import java.security.Principal;
import org.apache.kafka.common.security.auth.KafkaPrincipal;

/**
 * What the broker may know of the client connection a request came on: enough to tie a share
 * session to it. The network layer implements it; nothing here knows about sockets.
 */
public interface ClientConnection {
    String id();

    /** The name of the listener the client connected through ({@code PLAINTEXT}, {@code SSL}...). */
    default String listenerName() {
        return "";
    }

    /** The verified TLS client certificate's subject; null on plaintext or without a certificate. */
    default Principal peerPrincipal() {
        return null;
    }

    /**
     * Who the client is, as the authorizer and quotas see it: the SASL identity once
     * authenticated, the TLS client certificate's mapped subject, or {@code User:ANONYMOUS}.
     */
    default KafkaPrincipal principal() {
        return KafkaPrincipal.ANONYMOUS;
    }

    /** The client's address, as group descriptions show it. */
    InetSocketAddress remoteAddress();

    /** Runs {@code listener} once when the connection closes (at once if it already has), on any thread. */
    void onClose(Runnable listener);

    void removeCloseListener(Runnable listener);

    /** Whether the connection has closed: true before the listeners of {@link #onClose} run. */
    boolean isClosed();
}
