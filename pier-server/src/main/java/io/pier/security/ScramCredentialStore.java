package io.pier.security;

import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * SCRAM credentials by user and mechanism: salt, stored key, server key and iterations, never a
 * password. Kept in one small text file replaced whole with {@link AtomicFiles} on every change,
 * so a crash leaves the old or the new set. Logins read an immutable snapshot on the event loops,
 * without a lock; changes are made by one writer at a time (the metadata agent, see
 * {@code MetadataWriter}, or start-up before it), each written to the file before it is seen.
 */
public final class ScramCredentialStore {
    public static final int DEFAULT_ITERATIONS = 4096;
    private static final String HEADER = "# Pier SCRAM credentials v1: user(base64) mechanism salt stored-key server-key iterations";
    private final Path file;
    private final FileIO io;
    /** Immutable; replaced whole by the writer once the file holds it. */
    private volatile Map<String, Map<ScramMechanism, ScramCredential>> users;

    private ScramCredentialStore(Path file, FileIO io, Map<String, Map<ScramMechanism, ScramCredential>> users) {
        this.file = file;
        this.io = io;
        this.users = users;
    }

    /** The store in {@code file} (none yet: empty); {@code file} null keeps credentials in memory only. */
    public static ScramCredentialStore open(Path file) throws IOException {
        return open(file, FileIO.REAL);
    }

    /** As {@link #open(Path)}, the file written through {@code io}. */
    public static ScramCredentialStore open(Path file, FileIO io) throws IOException {
        Map<String, Map<ScramMechanism, ScramCredential>> users = new TreeMap<>();
        if (file == null) {
            return new ScramCredentialStore(null, io, Map.of());
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new ScramCredentialStore(file, io, Map.of());
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
                users.computeIfAbsent(user, u -> new EnumMap<>(ScramMechanism.class)).put(mechanism,
                        new ScramCredential(b64.decode(f[2]), b64.decode(f[3]), b64.decode(f[4]),
                                Integer.parseInt(f[5])));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + " line " + lineNo + " is damaged: " + e.getMessage(), e);
            }
        }
        return new ScramCredentialStore(file, io, frozen(users));
    }

    public ScramCredential get(String user, ScramMechanism mechanism) {
        Map<ScramMechanism, ScramCredential> m = users.get(user);
        return m == null ? null : m.get(mechanism);
    }

    /** The user's mechanisms and their iteration counts; empty for an unknown user. */
    public Map<ScramMechanism, Integer> describe(String user) {
        Map<ScramMechanism, Integer> out = new EnumMap<>(ScramMechanism.class);
        users.getOrDefault(user, Map.of()).forEach((m, c) -> out.put(m, c.iterations()));
        return out;
    }

    public List<String> userNames() {
        return List.copyOf(users.keySet());
    }

    /** Sets one credential, written durably before it returns and is seen. Writer only. */
    public void put(String user, ScramMechanism mechanism, ScramCredential credential) throws IOException {
        Map<String, Map<ScramMechanism, ScramCredential>> next = new TreeMap<>(users);
        Map<ScramMechanism, ScramCredential> mine = new EnumMap<>(ScramMechanism.class);
        mine.putAll(next.getOrDefault(user, Map.of()));
        mine.put(mechanism, credential);
        next.put(user, mine);
        publish(next);
    }

    /** Removes one credential; false if there was none. Writer only. */
    public boolean remove(String user, ScramMechanism mechanism) throws IOException {
        Map<ScramMechanism, ScramCredential> old = users.get(user);
        if (old == null || !old.containsKey(mechanism)) {
            return false;
        }
        Map<String, Map<ScramMechanism, ScramCredential>> next = new TreeMap<>(users);
        Map<ScramMechanism, ScramCredential> mine = new EnumMap<>(old);
        mine.remove(mechanism);
        if (mine.isEmpty()) {
            next.remove(user);
        } else {
            next.put(user, mine);
        }
        publish(next);
        return true;
    }

    /** Adds a credential made from a password unless the user already has one for the mechanism. Writer only. */
    public void putIfAbsent(String user, ScramMechanism mechanism, String password, int iterations)
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

    private void publish(Map<String, Map<ScramMechanism, ScramCredential>> next) throws IOException {
        Map<String, Map<ScramMechanism, ScramCredential>> frozen = frozen(next);
        persist(frozen);
        users = frozen;
    }

    private static Map<String, Map<ScramMechanism, ScramCredential>> frozen(
            Map<String, Map<ScramMechanism, ScramCredential>> users) {
        Map<String, Map<ScramMechanism, ScramCredential>> out = new TreeMap<>();
        users.forEach((user, creds) -> out.put(user, Collections.unmodifiableMap(new EnumMap<>(creds))));
        return Collections.unmodifiableMap(out);
    }

    private void persist(Map<String, Map<ScramMechanism, ScramCredential>> users) throws IOException {
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
        AtomicFiles.write(io, file, out.toString().getBytes(StandardCharsets.UTF_8));
    }
}
