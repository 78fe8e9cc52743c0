package io.pier.network;

import java.io.IOException;
import java.security.Principal;
import javax.security.auth.x500.X500Principal;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The principal of a TLS client certificate, as Kafka's default principal builder makes it:
 * {@code User:} plus the subject distinguished name (RFC 2253) mapped by
 * {@code ssl.principal.mapping.rules}. No certificate, or no rule matching, leaves User:ANONYMOUS.
 */
final class TlsPrincipals {
    private static final Logger LOG = LoggerFactory.getLogger(TlsPrincipals.class);

    private TlsPrincipals() {}

    static void fromCertificate(Connection connection, SslPrincipalMapper mapper) {
        Principal peer = connection.peerPrincipal();
        if (peer == null) {
            return;
        }
        String dn = peer instanceof X500Principal x ? x.getName() : peer.getName();
        try {
            connection.authenticated(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, mapper.getName(dn)));
        } catch (IOException | IllegalArgumentException e) {
            LOG.info("Connection {}: client certificate subject {} matches no ssl.principal.mapping.rules ({});"
                    + " it stays {}", connection.id(), dn, e.getMessage(), KafkaPrincipal.ANONYMOUS);
        }
    }
}
