package io.pier.security.acl;

import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The ACLs on disk: one properties file, replaced whole and atomically on every change, so after a
 * crash it holds either the ACLs before or after the change. Properties escaping keeps any name
 * (group ids may hold any character) intact.
 */
public final class AclStore {
    public static final String FILE_NAME = "acls.properties";

    private final Path file;
    private final FileIO io;

    public AclStore(Path metaDir) {
        this(metaDir, FileIO.REAL);
    }

    /** The store in {@code metaDir}, written through {@code io}. */
    public AclStore(Path metaDir, FileIO io) {
        this.file = metaDir.resolve(FILE_NAME);
        this.io = io;
    }

    public List<AclBinding> load() throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(new InputStreamReader(in, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            return List.of();
        }
        int count = Integer.parseInt(p.getProperty("count", "0"));
        List<AclBinding> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String k = "acl." + i + ".";
            try {
                out.add(new AclBinding(
                        new ResourcePattern(ResourceType.valueOf(get(p, k + "resourceType")), get(p, k + "name"),
                                PatternType.valueOf(get(p, k + "patternType"))),
                        new AccessControlEntry(get(p, k + "principal"), get(p, k + "host"),
                                AclOperation.valueOf(get(p, k + "operation")),
                                AclPermissionType.valueOf(get(p, k + "permission")))));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ": ACL " + i + " is unreadable: " + e.getMessage(), e);
            }
        }
        return out;
    }

    private static String get(Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null) {
            throw new IllegalArgumentException("missing " + key);
        }
        return v;
    }

    public void save(List<AclBinding> bindings) throws IOException {
        Properties p = new Properties();
        p.setProperty("count", Integer.toString(bindings.size()));
        for (int i = 0; i < bindings.size(); i++) {
            AclBinding b = bindings.get(i);
            String k = "acl." + i + ".";
            p.setProperty(k + "resourceType", b.pattern().resourceType().name());
            p.setProperty(k + "name", b.pattern().name());
            p.setProperty(k + "patternType", b.pattern().patternType().name());
            p.setProperty(k + "principal", b.entry().principal());
            p.setProperty(k + "host", b.entry().host());
            p.setProperty(k + "operation", b.entry().operation().name());
            p.setProperty(k + "permission", b.entry().permissionType().name());
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (Writer w = new OutputStreamWriter(bytes, StandardCharsets.UTF_8)) {
            p.store(w, "Pier ACLs (CreateAcls/DeleteAcls); replaced whole on every change");
        }
        AtomicFiles.write(io, file, bytes.toByteArray());
    }
}
