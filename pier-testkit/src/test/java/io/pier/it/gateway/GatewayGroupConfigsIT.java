package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.pier.it.RawKafkaClient;
import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;

/**
 * A share group's settings changed through one gateway node, then read or changed again through
 * another (issue 16, several gateway nodes). Admin sends IncrementalAlterConfigs and
 * DescribeConfigs of a GROUP resource to any broker, so with several nodes the next request often
 * lands on a node that has not read the change from the upstream yet. It must answer as a single
 * broker would: a read shows the change, and a change of another setting keeps it (each node
 * writes a group's whole settings). The requests are sent raw, each to a chosen node, so the test
 * does not depend on which node Admin picks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayGroupConfigsIT {
    private static final String GROUP = "planners";
    private static final String LOCK = "share.record.lock.duration.ms";
    private static final String LIMIT = "share.delivery.count.limit";

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private final List<Pier> nodes = new ArrayList<>();

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    private Pier startNode(int id) throws Exception {
        Pier node = Pier.builder().config("node.id", String.valueOf(id))
                .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers()).start();
        nodes.add(node);
        return node;
    }

    @Test
    void shouldSeeAGroupSettingChangedThroughAnotherNodeAtOnceAndKeepItThroughTheNextChange() throws Exception {
        // Given two gateway nodes
        Pier one = startNode(1);
        Pier two = startNode(2);
        try (RawKafkaClient viaOne = RawKafkaClient.connect(one.bootstrapServers());
                RawKafkaClient viaTwo = RawKafkaClient.connect(two.bootstrapServers())) {
            RawKafkaClient[] via = {viaOne, viaTwo};
            List<String> missed = new ArrayList<>();
            int correlation = 0;
            // When, again and again, the lock duration is set through one node and read through
            // the other as soon as the first has answered, then the delivery limit is set through
            // the other and both are read through the first
            for (int i = 0; i < 30; i++) {
                RawKafkaClient a = via[i % 2];
                RawKafkaClient b = via[(i + 1) % 2];
                String lock = String.valueOf(20_000 + i);
                String limit = String.valueOf(2 + i % 8);
                assertThat(alter(a, ++correlation, LOCK, lock)).as("set %s", lock).isEqualTo(Errors.NONE);
                Map<String, String> seen = describe(b, ++correlation);
                if (!lock.equals(seen.get(LOCK))) {
                    missed.add("round " + i + ": lock " + lock + " set, the other node said " + seen);
                }
                assertThat(alter(b, ++correlation, LIMIT, limit)).as("set %s", limit).isEqualTo(Errors.NONE);
                seen = describe(a, ++correlation);
                if (!lock.equals(seen.get(LOCK)) || !limit.equals(seen.get(LIMIT))) {
                    missed.add("round " + i + ": lock " + lock + " then limit " + limit + " set, the first node said "
                            + seen);
                }
            }
            // and the lock duration is deleted through node 2 and read through node 1
            assertThat(alter(viaTwo, ++correlation, LOCK, null)).isEqualTo(Errors.NONE);
            Map<String, String> afterDelete = describe(viaOne, ++correlation);

            // Then each read saw every change made before it, through whichever node
            assertThat(missed).as("reads that missed a change made through the other node").isEmpty();
            assertThat(afterDelete).containsEntry(LOCK, "30000");
        }
    }

    /** Sets {@code name} to {@code value} for the group, or deletes it when {@code value} is null. */
    private static Errors alter(RawKafkaClient raw, int correlation, String name, String value) throws Exception {
        short version = ApiKeys.INCREMENTAL_ALTER_CONFIGS.latestVersion();
        IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData();
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource =
                new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(GROUP);
        resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(name)
                .setConfigOperation((value != null ? AlterConfigOp.OpType.SET : AlterConfigOp.OpType.DELETE).id())
                .setValue(value));
        data.resources().add(resource);
        RequestHeader header = new RequestHeader(ApiKeys.INCREMENTAL_ALTER_CONFIGS, version, "settings", correlation);
        raw.send(header, new IncrementalAlterConfigsRequest.Builder(data).build(version));
        IncrementalAlterConfigsResponseData answer =
                ((IncrementalAlterConfigsResponse) raw.receiveResponse(header)).data();
        assertThat(answer.responses()).hasSize(1);
        return Errors.forCode(answer.responses().get(0).errorCode());
    }

    /** The group's lock duration and delivery limit as the node describes them. */
    private static Map<String, String> describe(RawKafkaClient raw, int correlation) throws Exception {
        short version = ApiKeys.DESCRIBE_CONFIGS.latestVersion();
        DescribeConfigsRequestData data = new DescribeConfigsRequestData();
        data.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource()
                .setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(GROUP)
                .setConfigurationKeys(new ArrayList<>(List.of(LOCK, LIMIT))));
        RequestHeader header = new RequestHeader(ApiKeys.DESCRIBE_CONFIGS, version, "settings", correlation);
        raw.send(header, new DescribeConfigsRequest.Builder(data).build(version));
        DescribeConfigsResponseData answer = ((DescribeConfigsResponse) raw.receiveResponse(header)).data();
        assertThat(answer.results()).hasSize(1);
        DescribeConfigsResponseData.DescribeConfigsResult result = answer.results().get(0);
        assertThat(Errors.forCode(result.errorCode())).as(result.errorMessage()).isEqualTo(Errors.NONE);
        Map<String, String> out = new TreeMap<>();
        result.configs().forEach(c -> out.put(c.name(), c.value()));
        return out;
    }
}
