package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pier.it.admin.KafkaTool;
import io.pier.testkit.PierExtension;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.tools.ConfigCommand;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The configuration side of share-group dead-letter queues (KIP-1191) through the stock Admin
 * client and kafka-configs: the group configs, the broker settings and the topic config.
 */
@Timeout(60)
class ShareGroupDeadLetterConfigsIT {
    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private static final String TOPIC_NAME = "errors.deadletterqueue.topic.name";
    private static final String COPY_RECORD = "errors.deadletterqueue.copy.record.enable";
    private static final String GROUP_ENABLE = "errors.deadletterqueue.group.enable";

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldSetDescribeAndDeleteTheGroupDeadLetterConfigs() throws Exception {
        String group = "g-dlq";
        try (Admin admin = clients.admin()) {
            Config before = describe(admin, groupResource(group));
            assertThat(before.get(TOPIC_NAME).value()).isEmpty();
            assertThat(before.get(TOPIC_NAME).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            assertThat(before.get(COPY_RECORD).value()).isEqualTo("false");
            assertThat(before.get(COPY_RECORD).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            alter(admin, groupResource(group), Map.of(TOPIC_NAME, "dlq." + group, COPY_RECORD, "true"));

            Config after = describe(admin, groupResource(group));
            assertThat(after.get(TOPIC_NAME).value()).isEqualTo("dlq." + group);
            assertThat(after.get(TOPIC_NAME).source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            assertThat(after.get(COPY_RECORD).value()).isEqualTo("true");
            assertThat(after.get(COPY_RECORD).source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);

            admin.incrementalAlterConfigs(Map.of(groupResource(group), List.of(
                    new AlterConfigOp(new ConfigEntry(TOPIC_NAME, ""), AlterConfigOp.OpType.DELETE),
                    new AlterConfigOp(new ConfigEntry(COPY_RECORD, ""), AlterConfigOp.OpType.DELETE))))
                    .all().get();
            Config deleted = describe(admin, groupResource(group));
            assertThat(deleted.get(TOPIC_NAME).value()).isEmpty();
            assertThat(deleted.get(TOPIC_NAME).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            assertThat(deleted.get(COPY_RECORD).value()).isEqualTo("false");
        }
    }

    @Test
    void shouldRefuseAnInternalOrUnprefixedDeadLetterTopicWithKafkasMessages() throws Exception {
        String group = "g-dlq-refused";
        try (Admin admin = clients.admin()) {
            Throwable internal = catchThrowable(() -> alter(admin, groupResource(group),
                    Map.of(TOPIC_NAME, "__consumer_offsets")));
            assertThat(internal).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessage("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'");

            Throwable unprefixed = catchThrowable(() -> alter(admin, groupResource(group),
                    Map.of(TOPIC_NAME, "orders-dead")));
            assertThat(unprefixed).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessage("Configured DLQ topic name does not comply with the DLQ topic prefix in share group: "
                            + group + ", topic: orders-dead, prefix: dlq..");

            Throwable badCopy = catchThrowable(() -> alter(admin, groupResource(group), Map.of(COPY_RECORD, "yes")));
            assertThat(badCopy).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining(COPY_RECORD);

            // Nothing was stored.
            Config config = describe(admin, groupResource(group));
            assertThat(config.get(TOPIC_NAME).value()).isEmpty();
            assertThat(config.get(TOPIC_NAME).source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            assertThat(config.get(COPY_RECORD).value()).isEqualTo("false");
        }
    }

    @Test
    void shouldDescribeTheBrokerDeadLetterSettings() throws Exception {
        Assumptions.assumeFalse(PierExtension.gateway(), "a gateway node writes no dead letters and has no such settings");
        try (Admin admin = clients.admin()) {
            Config broker = describe(admin, new ConfigResource(ConfigResource.Type.BROKER, ""));
            assertThat(broker.get("errors.deadletterqueue.topic.name.prefix").value()).isEqualTo("dlq.");
            assertThat(broker.get("errors.deadletterqueue.auto.create.topics.enable").value()).isEqualTo("false");
        }
    }

    @Test
    void shouldSetTheTopicConfigAtCreationAndAlterIt() throws Exception {
        Assumptions.assumeFalse(PierExtension.gateway(), "topics and their configs are the upstream's");
        try (Admin admin = clients.admin()) {
            admin.createTopics(List.of(new NewTopic("dlq.created", 1, (short) 1)
                    .configs(Map.of(GROUP_ENABLE, "true")))).all().get();
            admin.createTopics(List.of(new NewTopic("dlq.plain", 1, (short) 1))).all().get();

            ConfigEntry created = describe(admin, topicResource("dlq.created")).get(GROUP_ENABLE);
            assertThat(created.value()).isEqualTo("true");
            assertThat(created.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            ConfigEntry plain = describe(admin, topicResource("dlq.plain")).get(GROUP_ENABLE);
            assertThat(plain.value()).isEqualTo("false");
            assertThat(plain.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);

            alter(admin, topicResource("dlq.plain"), Map.of(GROUP_ENABLE, "true"));
            alter(admin, topicResource("dlq.created"), Map.of(GROUP_ENABLE, "false"));
            assertThat(describe(admin, topicResource("dlq.plain")).get(GROUP_ENABLE).value()).isEqualTo("true");
            assertThat(describe(admin, topicResource("dlq.created")).get(GROUP_ENABLE).value()).isEqualTo("false");

            Throwable bad = catchThrowable(() -> alter(admin, topicResource("dlq.plain"), Map.of(GROUP_ENABLE, "1")));
            assertThat(bad).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining(GROUP_ENABLE);
            assertThat(describe(admin, topicResource("dlq.plain")).get(GROUP_ENABLE).value()).isEqualTo("true");
        }
    }

    @Test
    void shouldSetTheDeadLetterTopicWithKafkaConfigs() throws Exception {
        String group = "g-dlq-cli";
        KafkaTool.Result altered = KafkaTool.run(ConfigCommand::main, "--bootstrap-server", PIER.bootstrapServers(),
                "--entity-type", "groups", "--entity-name", group, "--alter",
                "--add-config", TOPIC_NAME + "=dlq.x");
        assertThat(altered.exitCode()).isZero();
        assertThat(altered.out()).contains("Completed updating config for group " + group + ".");

        KafkaTool.Result described = KafkaTool.run(ConfigCommand::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--entity-type", "groups", "--entity-name", group, "--describe");
        assertThat(described.out()).contains(TOPIC_NAME + "=dlq.x");

        KafkaTool.Result refused = KafkaTool.run(ConfigCommand::main, "--bootstrap-server", PIER.bootstrapServers(),
                "--entity-type", "groups", "--entity-name", group, "--alter",
                "--add-config", TOPIC_NAME + "=__x");
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.out() + refused.err()).contains("DLQ topic name must not start with '__'");
        try (Admin admin = clients.admin()) {
            assertThat(describe(admin, groupResource(group)).get(TOPIC_NAME).value()).isEqualTo("dlq.x");
        }
    }

    private static ConfigResource groupResource(String group) {
        return new ConfigResource(ConfigResource.Type.GROUP, group);
    }

    private static ConfigResource topicResource(String topic) {
        return new ConfigResource(ConfigResource.Type.TOPIC, topic);
    }

    private static void alter(Admin admin, ConfigResource resource, Map<String, String> values) throws Exception {
        List<AlterConfigOp> ops = values.entrySet().stream()
                .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET))
                .toList();
        admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
    }

    private static Config describe(Admin admin, ConfigResource resource) throws Exception {
        return admin.describeConfigs(List.of(resource)).all().get().get(resource);
    }
}
