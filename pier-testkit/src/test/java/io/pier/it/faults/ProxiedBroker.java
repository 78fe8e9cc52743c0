package io.pier.it.faults;

import io.pier.server.Pier;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * An in-process broker with two listeners: PROXIED, which it advertises at a {@link FaultyProxy}'s
 * port, so every connection a client makes to it goes through the proxy; and DIRECT, which the
 * faults do not reach, for the test's own checks.
 */
final class ProxiedBroker implements AutoCloseable {
    final Pier pier;
    final FaultyProxy proxy;
    /** Bootstrap address through the proxy. */
    final String proxied;
    /** Bootstrap address of the direct listener. */
    final String direct;

    private ProxiedBroker(Pier pier, FaultyProxy proxy, String proxied, String direct) {
        this.pier = pier;
        this.proxy = proxy;
        this.proxied = proxied;
        this.direct = direct;
    }

    /** Starts a broker with {@code configs} on top of the two listeners, and its proxy. */
    static ProxiedBroker start(Map<String, String> configs) throws Exception {
        int brokerPort = freePort();
        int proxyPort = freePort();
        int directPort = freePort();
        Map<String, String> all = new LinkedHashMap<>(configs);
        all.put("listeners", "PROXIED://127.0.0.1:" + brokerPort + ",DIRECT://127.0.0.1:" + directPort);
        all.put("advertised.listeners", "PROXIED://127.0.0.1:" + proxyPort + ",DIRECT://127.0.0.1:" + directPort);
        all.put("listener.security.protocol.map", "PROXIED:PLAINTEXT,DIRECT:PLAINTEXT");
        all.put("inter.broker.listener.name", "DIRECT");
        Pier pier = Pier.builder().configs(all).start();
        try {
            return new ProxiedBroker(pier, new FaultyProxy(proxyPort, brokerPort), "127.0.0.1:" + proxyPort,
                    pier.bootstrapServers("DIRECT"));
        } catch (Exception e) {
            pier.close();
            throw e;
        }
    }

    /** Creates a one-partition topic that {@code group} reads from the start, with further group configs. */
    void topicForGroup(String topic, String group, Map<String, String> groupConfigs) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", direct))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        groupConfigs(group, groupConfigs);
    }

    /** Sets {@code group}'s configs, with {@code share.auto.offset.reset} at earliest. */
    void groupConfigs(String group, Map<String, String> groupConfigs) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", direct))) {
            List<AlterConfigOp> ops = new ArrayList<>();
            ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            groupConfigs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
        }
    }

    /**
     * A real explicit-mode share consumer through the proxy, named {@code clientId} on the wire
     * (what {@link FaultyProxy} tells clients apart by), acquiring at most the 10 records it hands
     * to the application in one poll; not subscribed yet.
     */
    KafkaShareConsumer<String, String> shareConsumer(String group, String clientId, int requestTimeoutMs) {
        Properties p = new Properties();
        p.put("bootstrap.servers", proxied);
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("max.poll.records", "10");
        p.put("share.acquire.mode", "record_limit");
        p.put("request.timeout.ms", String.valueOf(requestTimeoutMs));
        p.put("reconnect.backoff.max.ms", "200");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    @Override
    public void close() throws Exception {
        try {
            proxy.close();
        } finally {
            pier.close();
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
