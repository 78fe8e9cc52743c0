package io.pier.network;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.SocketChannel;
import io.pier.network.ConnectionLimits.Admission;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first thing a new connection meets: it takes a slot of the {@link ConnectionLimits}, given
 * back when the connection closes, or it is closed at once, before anything is read from it.
 * Kafka closes a connection over {@code max.connections.per.ip} the same way; over
 * {@code max.connections} or a listener's limit Kafka instead stops accepting until a slot frees,
 * leaving new connections waiting in the listen backlog. Pier closes those too: a client sees
 * the close at once and retries with its backoff, rather than hanging in a connect that the
 * kernel completed. Its own class, so that its logger is not loaded while the network is built.
 */
final class ConnectionAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionAdmission.class);

    private ConnectionAdmission() {}

    /** True if the connection may be served; false if it has been closed. */
    static boolean admit(SocketChannel ch, String listener, ConnectionLimits limits) {
        InetSocketAddress remote = ch.remoteAddress();
        if (remote == null) {
            // Closed by the client before it was set up: nothing to count, nothing to serve.
            ch.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            return false;
        }
        InetAddress address = remote.getAddress();
        Admission admission = limits.tryAcquire(listener, address);
        if (admission != Admission.ADMITTED) {
            LOG.info("Refused a connection from {} on listener {}: {} reached", address.getHostAddress(), listener,
                    admission.setting(listener));
            ch.close().addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            return false;
        }
        // The close future completes once, whoever closes the channel: the slot is given back exactly once.
        ch.closeFuture().addListener(f -> limits.release(listener, address));
        return true;
    }
}
