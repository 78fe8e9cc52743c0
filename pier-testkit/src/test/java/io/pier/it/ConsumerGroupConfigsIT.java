package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The per-group {@code consumer.*} configs of KIP-848 groups, set with Admin's
 * IncrementalAlterConfigs on a GROUP resource: bounded by the broker's {@code group.consumer.*}
 * settings, shown by DescribeConfigs, and what the group's members are told.
 */
@Timeout(60)
class ConsumerGroupConfigsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "1");

    @Test
    void shouldTellMembersTheGroupsHeartbeatIntervalWithinTheBrokerBounds() throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, "configured");
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic("configured-topic", 1, (short) 1))).all().get();
            admin.incrementalAlterConfigs(Map.of(group, List.of(
                    new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "6000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "50000"),
                            AlterConfigOp.OpType.SET)))).all().get();

            Config described = admin.describeConfigs(List.of(group)).all().get().get(group);
            assertThat(described.get("consumer.session.timeout.ms").value()).isEqualTo("50000");
            assertThat(described.get("consumer.session.timeout.ms").isDefault()).isFalse();
            assertThat(described.get("consumer.heartbeat.interval.ms").value()).isEqualTo("6000");
            // group.consumer.max.heartbeat.interval.ms is 15000 by default
            assertThatThrownBy(() -> admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("consumer.heartbeat.interval.ms", "20000"), AlterConfigOp.OpType.SET))))
                    .all().get()).hasCauseInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("consumer.heartbeat.interval.ms");
        }

        try (RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers(), Duration.ofSeconds(10))) {
            RequestHeader header = new RequestHeader(ApiKeys.CONSUMER_GROUP_HEARTBEAT, (short) 1, "raw", 1);
            raw.send(header, new ConsumerGroupHeartbeatRequest.Builder(new ConsumerGroupHeartbeatRequestData().setGroupId("configured")
                            .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
                            .setSubscribedTopicNames(List.of("configured-topic")).setTopicPartitions(List.of()))
                    .build((short) 1));
            ConsumerGroupHeartbeatResponseData r =
                    ((ConsumerGroupHeartbeatResponse) raw.receiveResponse(header)).data();
            assertThat(r.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(r.heartbeatIntervalMs()).isEqualTo(6000);
        }
    }
}
