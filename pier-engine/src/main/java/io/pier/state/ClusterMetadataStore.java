package io.pier.state;

import io.pier.log.AtomicFiles;
import io.pier.log.FileIO;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The broker's durable metadata: cluster id and every topic with its id, partition count and
 * config overrides. The whole file is replaced atomically on each change (temp file, fsync,
 * rename, fsync the folder), so after a crash it holds either the old or the new version.
 *
 * <pre>
 *   meta/cluster.properties   (java.util.Properties text)
 *     format.version=1
 *     cluster.id=&lt;base64 uuid&gt;
 *     topic.&lt;i&gt;.name=orders
 *     topic.&lt;i&gt;.id=&lt;base64 uuid&gt;
 *     topic.&lt;i&gt;.partitions=3
 *     topic.&lt;i&gt;.config.retention.ms=60000
 *     broker.config.log.retention.ms=3600000
 *     group.&lt;j&gt;.id=my-group
 *     group.&lt;j&gt;.config.share.auto.offset.reset=earliest
 *     quota.&lt;k&gt;.entity.user=alice            (client quotas: one entry per entity type,
 *     quota.&lt;k&gt;.default=client-id            the types whose default entity it is,
 *     quota.&lt;k&gt;.value.producer_byte_rate=1e6  and each quota's value)
 * </pre>
 *
 * Not thread-safe: the broker's metadata owner calls it.
 */
public final class ClusterMetadataStore {
    private static final String FORMAT_VERSION = "1";
    private final Path file;
    private final FileIO io;

    public ClusterMetadataStore(Path dataDir) {
        this(dataDir, FileIO.REAL);
    }

    /** The store under {@code dataDir}, written through {@code io}. */
    public ClusterMetadataStore(Path dataDir, FileIO io) {
        this.file = dataDir.resolve("meta").resolve("cluster.properties");
        this.io = io;
    }

    /**
     * What was stored, or an empty image with a fresh cluster id on first start. Broker configs
     * are dynamic overrides set through IncrementalAlterConfigs; group configs are per group id.
     */
    public record Image(String clusterId, List<TopicMetadata> topics, Map<String, String> brokerConfigs,
            Map<String, Map<String, String>> groupConfigs, Map<ClientQuotaEntity, Map<String, Double>> clientQuotas) {
        public Image {
            topics = List.copyOf(topics);
            brokerConfigs = Map.copyOf(brokerConfigs);
            groupConfigs = Map.copyOf(groupConfigs);
            clientQuotas = Map.copyOf(clientQuotas);
        }

        public Image withTopics(List<TopicMetadata> newTopics) {
            return new Image(clusterId, newTopics, brokerConfigs, groupConfigs, clientQuotas);
        }

        public Image withBrokerConfigs(Map<String, String> newBrokerConfigs) {
            return new Image(clusterId, topics, newBrokerConfigs, groupConfigs, clientQuotas);
        }

        public Image withGroupConfigs(Map<String, Map<String, String>> newGroupConfigs) {
            return new Image(clusterId, topics, brokerConfigs, newGroupConfigs, clientQuotas);
        }

        /** Client quotas (KIP-546): per entity (user, client-id, ip; a null name is the default), the values set. */
        public Image withClientQuotas(Map<ClientQuotaEntity, Map<String, Double>> newClientQuotas) {
            return new Image(clusterId, topics, brokerConfigs, groupConfigs, newClientQuotas);
        }
    }

    public Path file() {
        return file;
    }

    public Image load() throws IOException {
        if (!Files.exists(file)) {
            return new Image(Uuid.randomUuid().toString(), List.of(), Map.of(), Map.of(), Map.of());
        }
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(file, StandardCharsets.UTF_8)));
        if (!FORMAT_VERSION.equals(p.getProperty("format.version"))) {
            throw new IOException("unknown metadata format in " + file + ": " + p.getProperty("format.version"));
        }
        String clusterId = p.getProperty("cluster.id");
        Map<Integer, Map<String, String>> configs = new TreeMap<>();
        Map<Integer, String[]> basics = new TreeMap<>();
        Map<String, String> brokerConfigs = new HashMap<>();
        Map<String, Map<String, String>> groupConfigs = new HashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("broker.config.")) {
                brokerConfigs.put(key.substring("broker.config.".length()), p.getProperty(key));
                continue;
            }
            if (key.startsWith("group.")) {
                // group.<index>.id / group.<index>.config.<name>: ids may contain dots, so index them
                continue;
            }
            if (!key.startsWith("topic.")) {
                continue;
            }
            int dot = key.indexOf('.', 6);
            int index = Integer.parseInt(key.substring(6, dot));
            String rest = key.substring(dot + 1);
            String[] b = basics.computeIfAbsent(index, i -> new String[3]);
            switch (rest) {
                case "name" -> b[0] = p.getProperty(key);
                case "id" -> b[1] = p.getProperty(key);
                case "partitions" -> b[2] = p.getProperty(key);
                default -> {
                    if (rest.startsWith("config.")) {
                        configs.computeIfAbsent(index, i -> new HashMap<>())
                                .put(rest.substring(7), p.getProperty(key));
                    }
                }
            }
        }
        List<TopicMetadata> topics = new ArrayList<>();
        for (Map.Entry<Integer, String[]> e : basics.entrySet()) {
            String[] b = e.getValue();
            if (b[0] == null || b[1] == null || b[2] == null) {
                throw new IOException("incomplete topic entry " + e.getKey() + " in " + file);
            }
            topics.add(new TopicMetadata(b[0], Uuid.fromString(b[1]), Integer.parseInt(b[2]),
                    configs.getOrDefault(e.getKey(), Map.of())));
        }
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("group.") && key.endsWith(".id")) {
                String prefix = key.substring(0, key.length() - 2);
                Map<String, String> cfg = new HashMap<>();
                for (String k2 : p.stringPropertyNames()) {
                    if (k2.startsWith(prefix + "config.")) {
                        cfg.put(k2.substring(prefix.length() + 7), p.getProperty(k2));
                    }
                }
                groupConfigs.put(p.getProperty(key), cfg);
            }
        }
        return new Image(clusterId, topics, brokerConfigs, groupConfigs, clientQuotas(p));
    }

    /** The {@code quota.<k>.} entries: indexed, since entity names may contain dots. */
    private static Map<ClientQuotaEntity, Map<String, Double>> clientQuotas(Properties p) throws IOException {
        Map<String, Map<String, String>> entities = new TreeMap<>();
        Map<String, Map<String, Double>> values = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            if (!key.startsWith("quota.")) {
                continue;
            }
            int dot = key.indexOf('.', 6);
            if (dot < 0) {
                throw new IOException("malformed client quota entry " + key);
            }
            String index = key.substring(6, dot);
            String rest = key.substring(dot + 1);
            String value = p.getProperty(key);
            Map<String, String> entity = entities.computeIfAbsent(index, i -> new HashMap<>());
            if (rest.startsWith("entity.")) {
                entity.put(rest.substring(7), value);
            } else if (rest.equals("default")) {
                for (String type : value.split(",")) {
                    entity.put(type, null);
                }
            } else if (rest.startsWith("value.")) {
                try {
                    values.computeIfAbsent(index, i -> new HashMap<>()).put(rest.substring(6), Double.parseDouble(value));
                } catch (NumberFormatException e) {
                    throw new IOException("client quota " + key + " is not a number: " + value, e);
                }
            }
        }
        Map<ClientQuotaEntity, Map<String, Double>> out = new HashMap<>();
        values.forEach((index, quotas) -> out.put(new ClientQuotaEntity(entities.get(index)), quotas));
        return out;
    }

    public void save(Image image) throws IOException {
        Properties p = new Properties();
        p.setProperty("format.version", FORMAT_VERSION);
        p.setProperty("cluster.id", image.clusterId());
        int i = 0;
        for (TopicMetadata t : image.topics()) {
            String prefix = "topic." + i++ + ".";
            p.setProperty(prefix + "name", t.name());
            p.setProperty(prefix + "id", t.id().toString());
            p.setProperty(prefix + "partitions", String.valueOf(t.partitionCount()));
            t.configs().forEach((k, v) -> p.setProperty(prefix + "config." + k, v));
        }
        image.brokerConfigs().forEach((k, v) -> p.setProperty("broker.config." + k, v));
        int g = 0;
        for (Map.Entry<String, Map<String, String>> e : image.groupConfigs().entrySet()) {
            String prefix = "group." + g++ + ".";
            p.setProperty(prefix + "id", e.getKey());
            e.getValue().forEach((k, v) -> p.setProperty(prefix + "config." + k, v));
        }
        int q = 0;
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : image.clientQuotas().entrySet()) {
            String prefix = "quota." + q++ + ".";
            List<String> defaults = new ArrayList<>();
            e.getKey().entries().forEach((type, name) -> {
                if (name == null) {
                    defaults.add(type);
                } else {
                    p.setProperty(prefix + "entity." + type, name);
                }
            });
            if (!defaults.isEmpty()) {
                p.setProperty(prefix + "default", String.join(",", defaults));
            }
            e.getValue().forEach((k, v) -> p.setProperty(prefix + "value." + k, Double.toString(v)));
        }
        StringWriter out = new StringWriter();
        p.store(out, "Pier cluster metadata; written atomically, do not edit while the broker runs");
        AtomicFiles.write(io, file, out.toString().getBytes(StandardCharsets.UTF_8));
    }
}
