package io.pier.security;

import io.pier.common.AtomicFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * SCRAM credentials by user and mechanism: salt, stored key, server key and iterations, never a
 * password. Kept in one small text file replaced whole with {@link AtomicFiles} on every change,
 * so a crash leaves the old or the new set. Thread-safe: logins read it on the event loops while
 * AlterUserScramCredentials writes it.
 */
public final class ScramCredentialStore {
    public static final int DEFAULT_ITERATIONS = 4096;
    private static final String HEADER = "# Pier SCRAM credentials v1: user(base64) mechanism salt stored-key server-key iterations";
    private final Path file;
    /** Credentials from the file; a change is written before it is visible here. */
    private final Map<String, Map<ScramMechanism, ScramCredential>> users = new TreeMap<>();

    private ScramCredentialStore(Path file) {
        this.file = file;
    }

    /** The store in {@code file} (none yet: empty); {@code file} null keeps credentials in memory only. */
    public static ScramCredentialStore open(Path file) throws IOException {
        ScramCredentialStore store = new ScramCredentialStore(file);
        if (file == null) {
            return store;
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return store;
        }
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.trim().split(" ");
            try {
                if (f.length != 6) {
                    throw new IllegalArgumentException("expected 6 fields");
                }
                Base64.Decoder b64 = Base64.getDecoder();
                String user = new String(b64.decode(f[0]), StandardCharsets.UTF_8);
                ScramMechanism mechanism = ScramMechanism.forMechanismName(f[1]);
                if (mechanism == null) {
                    throw new IllegalArgumentException("unknown mechanism " + f[1]);
                }
                store.users.computeIfAbsent(user, u -> new EnumMap<>(ScramMechanism.class)).put(mechanism,
                        new ScramCredential(b64.decode(f[2]), b64.decode(f[3]), b64.decode(f[4]),
                                Integer.parseInt(f[5])));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + " line " + lineNo + " is damaged: " + e.getMessage(), e);
            }
        }
        return store;
    }

    public synchronized ScramCredential get(String user, ScramMechanism mechanism) {
        Map<ScramMechanism, ScramCredential> m = users.get(user);
        return m == null ? null : m.get(mechanism);
    }

    /** The user's mechanisms and their iteration counts; empty for an unknown user. */
    public synchronized Map<ScramMechanism, Integer> describe(String user) {
        Map<ScramMechanism, Integer> out = new EnumMap<>(ScramMechanism.class);
        users.getOrDefault(user, Map.of()).forEach((m, c) -> out.put(m, c.iterations()));
        return out;
    }

    public synchronized java.util.List<String> userNames() {
        return java.util.List.copyOf(users.keySet());
    }

    /** Sets one credential, written durably before it returns. */
    public synchronized void put(String user, ScramMechanism mechanism, ScramCredential credential) throws IOException {
        Map<ScramMechanism, ScramCredential> old = users.get(user);
        Map<ScramMechanism, ScramCredential> next = new EnumMap<>(ScramMechanism.class);
        if (old != null) {
            next.putAll(old);
        }
        next.put(mechanism, credential);
        users.put(user, next);
        try {
            persist();
        } catch (IOException e) {
            restore(user, old);
            throw e;
        }
    }

    /** Removes one credential; false if there was none. */
    public synchronized boolean remove(String user, ScramMechanism mechanism) throws IOException {
        Map<ScramMechanism, ScramCredential> old = users.get(user);
        if (old == null || !old.containsKey(mechanism)) {
            return false;
        }
        Map<ScramMechanism, ScramCredential> next = new EnumMap<>(old);
        next.remove(mechanism);
        restore(user, next);
        try {
            persist();
        } catch (IOException e) {
            restore(user, old);
            throw e;
        }
        return true;
    }

    /** Adds a credential made from a password unless the user already has one for the mechanism. */
    public synchronized void putIfAbsent(String user, ScramMechanism mechanism, String password, int iterations)
            throws IOException {
        if (get(user, mechanism) == null) {
            put(user, mechanism, credential(mechanism, password, iterations));
        }
    }

    public static ScramCredential credential(ScramMechanism mechanism, String password, int iterations) {
        try {
            return new ScramFormatter(mechanism).generateCredential(password, iterations);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private void restore(String user, Map<ScramMechanism, ScramCredential> value) {
        if (value == null || value.isEmpty()) {
            users.remove(user);
        } else {
            users.put(user, value);
        }
    }

    private void persist() throws IOException {
        if (file == null) {
            return;
        }
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        Base64.Encoder b64 = Base64.getEncoder();
        users.forEach((user, creds) -> creds.forEach((m, c) -> out
                .append(b64.encodeToString(user.getBytes(StandardCharsets.UTF_8))).append(' ')
                .append(m.mechanismName()).append(' ')
                .append(b64.encodeToString(c.salt())).append(' ')
                .append(b64.encodeToString(c.storedKey())).append(' ')
                .append(b64.encodeToString(c.serverKey())).append(' ')
                .append(c.iterations()).append('\n')));
        AtomicFiles.write(file, out.toString().getBytes(StandardCharsets.UTF_8));
    }
}
