package io.pier.service;

import java.net.InetSocketAddress;

/**
 * What the broker may know of the client connection a request came on: enough to tie a share
 * session to it. The network layer implements it; nothing here knows about sockets.
 */
public interface ClientConnection {
    String id();

    /** The client's address, as group descriptions show it. */
    InetSocketAddress remoteAddress();

    /** Runs {@code listener} once when the connection closes (at once if it already has), on any thread. */
    void onClose(Runnable listener);

    void removeCloseListener(Runnable listener);
}
