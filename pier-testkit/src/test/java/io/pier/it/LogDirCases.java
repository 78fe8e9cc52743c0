package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ProtocolVersionMatrixIT.Case;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData.DescribableLogDirTopic;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterReplicaLogDirsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;

/**
 * The matrix cells of DescribeLogDirs and AlterReplicaLogDirs: the matrix topic's partition is in
 * the broker's log directory at every version, with the volume's size from v4; a move to a path
 * that is no log directory is refused with LOG_DIR_NOT_FOUND, as on Kafka.
 */
final class LogDirCases {
    private LogDirCases() {}

    static void register(Map<ApiKeys, Case> cases) {
        cases.put(ApiKeys.DESCRIBE_LOG_DIRS, (c, v) -> {
            DescribeLogDirsResponse r = c.call(ApiKeys.DESCRIBE_LOG_DIRS, v, new DescribeLogDirsRequestData()
                    .setTopics(new DescribeLogDirsRequestData.DescribableLogDirTopicCollection(List.of(
                            new DescribableLogDirTopic().setTopic(ProtocolVersionMatrixIT.topic())
                                    .setPartitions(List.of(0))).iterator())));
            assertThat(r.data().errorCode()).isZero();
            assertThat(r.data().results()).singleElement().satisfies(dir -> {
                assertThat(dir.errorCode()).isZero();
                assertThat(dir.logDir()).startsWith("/");
                assertThat(dir.topics()).singleElement().satisfies(t -> {
                    assertThat(t.name()).isEqualTo(ProtocolVersionMatrixIT.topic());
                    assertThat(t.partitions()).singleElement().satisfies(p -> {
                        assertThat(p.partitionIndex()).isZero();
                        assertThat(p.partitionSize()).isPositive();
                        assertThat(p.isFutureKey()).isFalse();
                    });
                });
                // Read at an older version, the volume fields are their default, "unknown".
                if (v >= 4) {
                    assertThat(dir.totalBytes()).isPositive();
                } else {
                    assertThat(dir.totalBytes()).isEqualTo(-1L);
                }
            });
        });
        cases.put(ApiKeys.ALTER_REPLICA_LOG_DIRS, (c, v) -> {
            AlterReplicaLogDirsResponse r = c.call(ApiKeys.ALTER_REPLICA_LOG_DIRS, v, new AlterReplicaLogDirsRequestData()
                    .setDirs(new AlterReplicaLogDirsRequestData.AlterReplicaLogDirCollection(List.of(
                            new AlterReplicaLogDir().setPath("/no/such/log/dir").setTopics(
                                    new AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopicCollection(List.of(
                                            new AlterReplicaLogDirTopic().setName(ProtocolVersionMatrixIT.topic())
                                                    .setPartitions(List.of(0))).iterator()))).iterator())));
            assertThat(r.data().results()).singleElement().satisfies(t -> assertThat(t.partitions()).singleElement()
                    .satisfies(p -> assertThat(p.errorCode()).isEqualTo(Errors.LOG_DIR_NOT_FOUND.code())));
        });
    }
}
