package io.pier.dlq;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Partition counts of topics, asked once per run with Admin; -1 for a topic that does not exist. */
final class Topics {
    private final Admin admin;
    private final Duration timeout;
    private final Map<String, Integer> partitions = new HashMap<>();

    Topics(Admin admin, Duration timeout) {
        this.admin = admin;
        this.timeout = timeout;
    }

    /** Records a topic this run just created. */
    void created(String topic, int count) {
        partitions.put(topic, count);
    }

    int partitions(String topic) {
        Integer known = partitions.get(topic);
        if (known != null) {
            return known;
        }
        int n;
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(topic);
            n = d.partitions().size();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw new RedriveException("cannot describe topic " + topic + ": " + e.getCause().getMessage(), e.getCause());
            }
            n = -1;
        } catch (TimeoutException e) {
            throw new RedriveException("no answer describing topic " + topic + " within " + timeout.toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedriveException("interrupted", e);
        }
        partitions.put(topic, n);
        return n;
    }
}
