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
 *
 * <p>On a gateway the credentials are every node's, kept on the upstream ({@link #remote}): a
 * change is written there first and seen here once read back ({@link #apply}), as on every node.
 */
public final class ScramCredentialStore {
    public static final int DEFAULT_ITERATIONS = 4096;
    private static final String HEADER = "# Pier SCRAM credentials v1: user(base64) mechanism salt stored-key server-key iterations";
    /** Where a gateway's changes go before they are seen: they come back through {@link #apply}. */
    public interface Remote {
        /** Writes the credential (null: removes it) and returns once this node has applied it. */
        void write(String user, ScramMechanism mechanism, ScramCredential credential) throws IOException;
    }

    private final Path file;
    private final FileIO io;
    /** A gateway's upstream, once attached; null for a broker's file. */
    private volatile Remote remote;
    private final boolean remoteMode;
    /** Immutable; replaced whole by the writer once the file holds it. */
    private volatile Map<String, Map<ScramMechanism, ScramCredential>> users;

    private ScramCredentialStore(Path file, FileIO io, Map<String, Map<ScramMechanism, ScramCredential>> users,
            boolean remoteMode) {
        this.file = file;
        this.io = io;
        this.users = users;
        this.remoteMode = remoteMode;
    }

    /**
     * A gateway's store, empty until the upstream's credentials are read into it ({@link #apply});
     * changes fail until {@link #attach} names where they go.
     */
    public static ScramCredentialStore remote() {
        return new ScramCredentialStore(null, FileIO.REAL, Map.of(), true);
    }

    /** Where a {@link #remote} store's changes go from now on. */
    public void attach(Remote to) {
        if (!remoteMode) {
            throw new IllegalStateException("a broker's credentials are kept in its data folder");
        }
        this.remote = to;
    }

    /** A gateway: a change read back from the upstream (null credential: removed), seen from now on. */
    public synchronized void apply(String user, ScramMechanism mechanism, ScramCredential credential) {
        users = frozen(changed(user, mechanism, credential));
    }

    /** The store in {@code file} (none yet: empty); {@code file} null keeps credentials in memory only. */
    public static ScramCredentialStore open(Path file) throws IOException {
        return open(file, FileIO.REAL);
    }

    /** As {@link #open(Path)}, the file written through {@code io}. */
    public static ScramCredentialStore open(Path file, FileIO io) throws IOException {
        Map<String, Map<ScramMechanism, ScramCredential>> users = new TreeMap<>();
        if (file == null) {
            return new ScramCredentialStore(null, io, Map.of(), false);
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new ScramCredentialStore(file, io, Map.of(), false);
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
        return new ScramCredentialStore(file, io, frozen(users), false);
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
        if (remoteMode) {
            toRemote(user, mechanism, credential);
            return;
        }
        publish(changed(user, mechanism, credential));
    }

    /** The credentials with one changed (null: removed). */
    private Map<String, Map<ScramMechanism, ScramCredential>> changed(String user, ScramMechanism mechanism,
            ScramCredential credential) {
        Map<String, Map<ScramMechanism, ScramCredential>> next = new TreeMap<>(users);
        Map<ScramMechanism, ScramCredential> mine = new EnumMap<>(ScramMechanism.class);
        mine.putAll(next.getOrDefault(user, Map.of()));
        if (credential == null) {
            mine.remove(mechanism);
        } else {
            mine.put(mechanism, credential);
        }
        if (mine.isEmpty()) {
            next.remove(user);
        } else {
            next.put(user, mine);
        }
        return next;
    }

    private void toRemote(String user, ScramMechanism mechanism, ScramCredential credential) throws IOException {
        Remote to = remote;
        if (to == null) {
            throw new IOException("the gateway's credentials on the upstream are not reachable yet");
        }
        to.write(user, mechanism, credential);
    }

    /** Removes one credential; false if there was none. Writer only. */
    public boolean remove(String user, ScramMechanism mechanism) throws IOException {
        Map<ScramMechanism, ScramCredential> old = users.get(user);
        if (old == null || !old.containsKey(mechanism)) {
            return false;
        }
        if (remoteMode) {
            toRemote(user, mechanism, null);
        } else {
            publish(changed(user, mechanism, null));
        }
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
