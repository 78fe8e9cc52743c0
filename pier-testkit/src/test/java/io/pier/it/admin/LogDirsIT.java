package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.LogDirNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.tools.LogDirsCommand;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DescribeLogDirs and AlterReplicaLogDirs through Admin and Kafka's kafka-log-dirs tool: Pier has
 * one log directory, its data folder, with every partition and its size in it, and refuses to
 * move a partition anywhere else as a Kafka broker with that one directory does.
 */
@Timeout(120)
class LogDirsIT {
    private static final long WAIT_S = 30;

    @RegisterExtension
    static final PierExtension PIER = new PierExtension();

    private static ShareClients clients;
    private static Admin admin;
    private static int brokerId;

    @BeforeAll
    static void connect() throws Exception {
        clients = new ShareClients(PIER.bootstrapServers());
        admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()));
        brokerId = admin.describeCluster().nodes().get(WAIT_S, TimeUnit.SECONDS).iterator().next().id();
    }

    @AfterAll
    static void close() {
        if (admin != null) {
            admin.close();
        }
    }

    private static String dataDir() {
        return PIER.dataDir().toAbsolutePath().normalize().toString();
    }

    private static LogDirDescription theLogDir() throws Exception {
        Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(brokerId))
                .allDescriptions().get(WAIT_S, TimeUnit.SECONDS).get(brokerId);
        assertThat(dirs).as("Pier keeps everything in its one data folder").containsOnlyKeys(dataDir());
        return dirs.get(dataDir());
    }

    @Test
    void shouldDescribeTheDataFolderWithEveryPartitionAndItsSize() throws Exception {
        // Given two topics, with records in one partition only
        clients.createTopic("dirs-a", 3);
        clients.createTopic("dirs-b", 1);
        LogDirDescription before = theLogDir();
        clients.produce("dirs-a", 1, "r", 200);

        // When the log directory is described again
        LogDirDescription after = theLogDir();

        // Then it holds every partition, the one written to grown, the others as they were
        assertThat(after.error()).isNull();
        List<TopicPartition> ours = List.of(new TopicPartition("dirs-a", 0), new TopicPartition("dirs-a", 1),
                new TopicPartition("dirs-a", 2), new TopicPartition("dirs-b", 0));
        assertThat(after.replicaInfos()).containsKeys(ours.toArray(TopicPartition[]::new));
        for (TopicPartition tp : ours) {
            ReplicaInfo info = after.replicaInfos().get(tp);
            assertThat(info.offsetLag()).isZero();
            assertThat(info.isFuture()).isFalse();
        }
        long grown = after.replicaInfos().get(new TopicPartition("dirs-a", 1)).size();
        assertThat(grown).isGreaterThan(before.replicaInfos().get(new TopicPartition("dirs-a", 1)).size())
                .isGreaterThan(200L * "r-0".length());
        assertThat(after.replicaInfos().get(new TopicPartition("dirs-a", 0)).size())
                .isEqualTo(before.replicaInfos().get(new TopicPartition("dirs-a", 0)).size());
        // And the volume's figures come from the file system (v4)
        assertThat(after.totalBytes()).isPresent();
        assertThat(after.usableBytes()).isPresent();
        assertThat(after.totalBytes().getAsLong()).isPositive();
        assertThat(after.usableBytes().getAsLong()).isPositive().isLessThanOrEqualTo(after.totalBytes().getAsLong());
    }

    @Test
    void shouldDescribeReplicaLogDirsOfExistingAndUnknownPartitions() throws Exception {
        clients.createTopic("dirs-replica", 1);
        TopicPartitionReplica known = new TopicPartitionReplica("dirs-replica", 0, brokerId);
        TopicPartitionReplica unknown = new TopicPartitionReplica("dirs-replica", 5, brokerId);

        Map<TopicPartitionReplica, ReplicaLogDirInfo> infos = admin
                .describeReplicaLogDirs(List.of(known, unknown)).all().get(WAIT_S, TimeUnit.SECONDS);

        assertThat(infos.get(known).getCurrentReplicaLogDir()).isEqualTo(dataDir());
        assertThat(infos.get(known).getCurrentReplicaOffsetLag()).isZero();
        assertThat(infos.get(known).getFutureReplicaLogDir()).isNull();
        assertThat(infos.get(unknown).getCurrentReplicaLogDir()).isNull();
    }

    @Test
    void shouldRefuseToMoveAPartitionOutOfTheDataFolder() throws Exception {
        clients.createTopic("dirs-move", 1);
        TopicPartitionReplica replica = new TopicPartitionReplica("dirs-move", 0, brokerId);
        // Long enough for the moving folder to pass 255 characters, short enough for Pier's own folders.
        String longName = "m".repeat(220);
        clients.createTopic(longName, 1);
        Map<TopicPartitionReplica, String> moves = new HashMap<>();
        moves.put(replica, dataDir() + "-elsewhere");
        moves.put(new TopicPartitionReplica("dirs-move", 3, brokerId), dataDir());
        moves.put(new TopicPartitionReplica(longName, 0, brokerId), dataDir());

        var results = admin.alterReplicaLogDirs(moves).values();

        // A path that is not a configured log directory, as Kafka answers
        assertThatThrownBy(() -> results.get(replica).get(WAIT_S, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(LogDirNotFoundException.class);
        // A partition the broker does not have
        assertThatThrownBy(() -> results.get(new TopicPartitionReplica("dirs-move", 3, brokerId))
                .get(WAIT_S, TimeUnit.SECONDS)).hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
        // A topic whose name is too long for Kafka's moving folder, refused before anything else
        assertThatThrownBy(() -> results.get(new TopicPartitionReplica(longName, 0, brokerId))
                .get(WAIT_S, TimeUnit.SECONDS)).hasCauseInstanceOf(InvalidTopicException.class);
        // And to the folder it is in already: nothing to do, so no error
        admin.alterReplicaLogDirs(Map.of(replica, dataDir())).all().get(WAIT_S, TimeUnit.SECONDS);
        assertThat(theLogDir().replicaInfos()).containsKey(new TopicPartition("dirs-move", 0));
    }

    @Test
    void shouldPrintThePartitionsWithKafkaLogDirs() throws Exception {
        // Given a topic with records in partition 0
        clients.createTopic("dirs-tool", 2);
        clients.produce("dirs-tool", 0, "t", 50);

        // When kafka-log-dirs describes it
        KafkaTool.Result described = KafkaTool.run(LogDirsCommand::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--describe", "--topic-list", "dirs-tool");
        assertThat(described.exitCode()).as(described.out() + described.err()).isZero();

        // Then its JSON names the broker, the data folder and both partitions with their sizes
        String json = described.out().lines().filter(l -> l.startsWith("{")).findFirst()
                .orElseThrow(() -> new AssertionError("no JSON in:\n" + described.out()));
        JsonNode broker = new ObjectMapper().readTree(json).get("brokers").get(0);
        assertThat(broker.get("broker").asInt()).isEqualTo(brokerId);
        JsonNode logDir = broker.get("logDirs").get(0);
        assertThat(logDir.get("logDir").asText()).isEqualTo(dataDir());
        assertThat(logDir.get("error").isNull()).isTrue();
        Map<String, Long> sizes = new HashMap<>();
        List<JsonNode> partitions = new ArrayList<>();
        logDir.get("partitions").forEach(partitions::add);
        partitions.forEach(p -> sizes.put(p.get("partition").asText(), p.get("size").asLong()));
        assertThat(sizes).containsOnlyKeys("dirs-tool-0", "dirs-tool-1");
        assertThat(sizes.get("dirs-tool-0")).isGreaterThan(sizes.get("dirs-tool-1"));
        assertThat(partitions).allSatisfy(p -> {
            assertThat(p.get("offsetLag").asLong()).isZero();
            assertThat(p.get("isFuture").asBoolean()).isFalse();
        });
    }
}
