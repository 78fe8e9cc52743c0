package io.pier.protocol;

import io.pier.service.LogDirs;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir;
import org.apache.kafka.common.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult;
import org.apache.kafka.common.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult;
import org.apache.kafka.common.message.DescribeLogDirsRequestData.DescribableLogDirTopic;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterReplicaLogDirsRequest;
import org.apache.kafka.common.requests.AlterReplicaLogDirsResponse;
import org.apache.kafka.common.requests.DescribeLogDirsRequest;
import org.apache.kafka.common.requests.DescribeLogDirsResponse;

/**
 * DescribeLogDirs (kafka-log-dirs, {@code Admin.describeLogDirs} and
 * {@code describeReplicaLogDirs}) and AlterReplicaLogDirs ({@code Admin.alterReplicaLogDirs},
 * kafka-reassign-partitions with log dirs): the broker's log directory from {@link LogDirs},
 * translated to and from the wire.
 */
public final class LogDirHandlers {
    private final LogDirs logDirs;
    private final Access access;

    public LogDirHandlers(LogDirs logDirs, Access access) {
        this.logDirs = logDirs;
        this.access = access;
    }

    /**
     * Needs DESCRIBE on the cluster, as on Kafka, which answers a principal without it with no
     * directories and, from v3 on, CLUSTER_AUTHORIZATION_FAILED as the top-level error (the
     * request's own error response carries no error at all).
     */
    public CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        if (!access.cluster(request, AclOperation.DESCRIBE)) {
            return CompletableFuture.completedFuture(new DescribeLogDirsResponse(new DescribeLogDirsResponseData()
                    .setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code())));
        }
        DescribeLogDirsRequest body = request.bodyAs(DescribeLogDirsRequest.class);
        return logDirs.describe(wanted(body)).thenApply(dirs -> {
            DescribeLogDirsResponseData data = new DescribeLogDirsResponseData();
            for (LogDirs.Description dir : dirs) {
                data.results().add(result(dir));
            }
            return new DescribeLogDirsResponse(data);
        });
    }

    /** Null topics asks for every partition; otherwise exactly the partitions listed, as Kafka reads it. */
    private static Predicate<TopicPartition> wanted(DescribeLogDirsRequest body) {
        if (body.isAllTopicPartitions()) {
            return tp -> true;
        }
        Set<TopicPartition> asked = new HashSet<>();
        for (DescribableLogDirTopic t : body.data().topics()) {
            t.partitions().forEach(p -> asked.add(new TopicPartition(t.topic(), p)));
        }
        return asked::contains;
    }

    private static DescribeLogDirsResult result(LogDirs.Description dir) {
        Map<String, DescribeLogDirsTopic> topics = new LinkedHashMap<>();
        for (LogDirs.PartitionLogSize size : dir.partitions()) {
            topics.computeIfAbsent(size.partition().topic(), name -> new DescribeLogDirsTopic().setName(name))
                    .partitions().add(new DescribeLogDirsPartition()
                            .setPartitionIndex(size.partition().partition())
                            .setPartitionSize(size.sizeBytes())
                            // Kafka's lag of a current log is its high watermark less its log end
                            // offset, at least 0: a leader's is 0, and every Pier log is one.
                            .setOffsetLag(0)
                            .setIsFutureKey(false));
        }
        // TotalBytes and UsableBytes (v4+) and IsCordoned (v5+) are ignorable: written only where
        // the version has them.
        return new DescribeLogDirsResult().setLogDir(dir.path()).setErrorCode(Errors.NONE.code())
                .setTopics(new ArrayList<>(topics.values()))
                .setTotalBytes(dir.totalBytes()).setUsableBytes(dir.usableBytes())
                .setIsCordoned(false);
    }

    /**
     * Needs ALTER on the cluster (registered behind {@link Access#requireCluster}, whose refusal
     * is the request's own error response: CLUSTER_AUTHORIZATION_FAILED for every partition, as
     * Kafka answers); then an error code per partition from {@link LogDirs#alter}.
     */
    public CompletableFuture<AbstractResponse> alter(ApiRequest request) {
        AlterReplicaLogDirsRequest body = request.bodyAs(AlterReplicaLogDirsRequest.class);
        Map<String, AlterReplicaLogDirTopicResult> byTopic = new LinkedHashMap<>();
        for (AlterReplicaLogDir dir : body.data().dirs()) {
            for (AlterReplicaLogDirTopic topic : dir.topics()) {
                AlterReplicaLogDirTopicResult result = byTopic.computeIfAbsent(topic.name(),
                        name -> new AlterReplicaLogDirTopicResult().setTopicName(name));
                for (int partition : topic.partitions()) {
                    Errors error = logDirs.alter(new TopicPartition(topic.name(), partition), dir.path());
                    result.partitions().add(new AlterReplicaLogDirPartitionResult()
                            .setPartitionIndex(partition).setErrorCode(error.code()));
                }
            }
        }
        List<AlterReplicaLogDirTopicResult> results = new ArrayList<>(byTopic.values());
        return CompletableFuture.completedFuture(new AlterReplicaLogDirsResponse(
                new AlterReplicaLogDirsResponseData().setResults(results)));
    }
}
