package io.pier.it;

import static io.pier.it.ProtocolVersionMatrixIT.assertNoErrors;
import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ProtocolVersionMatrixIT.Case;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * The matrix cells of the SASL and SCRAM credential APIs. The matrix broker's listener is
 * PLAINTEXT, where Kafka answers SaslHandshake and SaslAuthenticate with ILLEGAL_SASL_STATE; the
 * SASL exchange itself is covered by SaslIT.
 */
final class SaslCases {
    private SaslCases() {}

    static void register(Map<ApiKeys, Case> cases) {
        cases.put(ApiKeys.SASL_HANDSHAKE, (c, v) -> {
            SaslHandshakeResponse r = c.call(ApiKeys.SASL_HANDSHAKE, v,
                    new SaslHandshakeRequestData().setMechanism("PLAIN"));
            assertThat(r.error()).isEqualTo(Errors.ILLEGAL_SASL_STATE);
        });
        cases.put(ApiKeys.SASL_AUTHENTICATE, (c, v) -> {
            SaslAuthenticateResponse r = c.call(ApiKeys.SASL_AUTHENTICATE, v,
                    new SaslAuthenticateRequestData().setAuthBytes(new byte[] {0, 'a', 0, 'b'}));
            assertThat(r.error()).isEqualTo(Errors.ILLEGAL_SASL_STATE);
        });
        cases.put(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, (c, v) -> {
            AlterUserScramCredentialsResponse r = c.call(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, v,
                    new AlterUserScramCredentialsRequestData().setUpsertions(List.of(new ScramCredentialUpsertion()
                            .setName("matrix-user").setMechanism((byte) 1).setIterations(4096)
                            .setSalt(new byte[] {1, 2, 3}).setSaltedPassword(new byte[32]))));
            assertThat(r.data().results()).singleElement().satisfies(u ->
                    assertThat(u.errorCode()).isEqualTo(Errors.NONE.code()));
        });
        cases.put(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, (c, v) -> {
            DescribeUserScramCredentialsResponse r = c.call(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, v,
                    new DescribeUserScramCredentialsRequestData().setUsers(null));
            assertThat(r.data().errorCode()).isEqualTo(Errors.NONE.code());
        });
    }
}
