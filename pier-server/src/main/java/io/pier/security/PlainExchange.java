package io.pier.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;

/**
 * SASL/PLAIN (RFC 4616) against the {@code user_<name>="<password>"} options of the listener's
 * PlainLoginModule. A message that is malformed, names an unknown user, carries a wrong password
 * or an authorization id other than the user name (CVE-2017-12610) fails alike. Passwords are
 * compared in constant time, and an unknown user is compared against a dummy, so timing says no
 * more than the answer.
 */
final class PlainExchange implements SaslExchange {
    private static final byte[] DUMMY = new byte[32];
    private final Map<String, byte[]> passwords;
    private String user;
    private boolean complete;

    PlainExchange(Map<String, byte[]> passwords) {
        this.passwords = passwords;
    }

    @Override
    public byte[] evaluate(byte[] response) {
        if (complete) {
            throw new IllegalStateException("PLAIN authentication already complete");
        }
        int first = indexOf(response, 0);
        int second = first < 0 ? -1 : indexOf(response, first + 1);
        if (second < 0 || indexOf(response, second + 1) >= 0) {
            throw SaslExchange.failure("PLAIN");
        }
        String authzid = new String(response, 0, first, StandardCharsets.UTF_8);
        String authcid = new String(response, first + 1, second - first - 1, StandardCharsets.UTF_8);
        byte[] given = java.util.Arrays.copyOfRange(response, second + 1, response.length);
        byte[] expected = passwords.get(authcid);
        boolean match = MessageDigest.isEqual(expected == null ? DUMMY : expected, given);
        if (expected == null || !match || authcid.isEmpty() || given.length == 0
                || (!authzid.isEmpty() && !authzid.equals(authcid))) {
            throw SaslExchange.failure("PLAIN");
        }
        user = authcid;
        complete = true;
        return new byte[0];
    }

    private static int indexOf(byte[] b, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public boolean isComplete() {
        return complete;
    }

    @Override
    public String authorizationId() {
        if (!complete) {
            throw new IllegalStateException("PLAIN authentication not complete");
        }
        return user;
    }
}
