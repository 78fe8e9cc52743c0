package io.pier.it.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.gateway.UpstreamDeadLetterQueues;
import io.pier.service.DeadLetterQueues;
import io.pier.service.DeadLetterQueues.Queue;
import io.pier.testkit.UpstreamKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gateway node's dead-letter queues on a real Kafka 4.4 upstream: what it learns of a queue
 * topic (missing, not enabled for groups, ready with its partition count), the letters it appends
 * there, and the lookup that finds a share-partition's trailing letters again after a takeover
 * or a lost answer.
 */
@Timeout(120)
class UpstreamDeadLetterQueuesIT {
    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static final TopicPartition SOURCE = new TopicPartition("orders", 0);

    @Test
    void shouldTellMissingNotEnabledAndReadyQueuesApart() throws Exception {
        try (Admin admin = admin(); UpstreamDeadLetterQueues queues = open()) {
            admin.createTopics(List.of(new NewTopic("dlq.open", 3, (short) 1)
                            .configs(Map.of("errors.deadletterqueue.group.enable", "true")),
                    new NewTopic("dlq.closed", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);

            assertThat(queues.find("dlq.open")).as("before the upstream answered").isEqualTo(Queue.NOT_READY);
            await().atMost(Duration.ofSeconds(20)).until(() -> queues.find("dlq.open").state()
                    != DeadLetterQueues.State.NOT_READY);
            assertThat(queues.find("dlq.open")).isEqualTo(Queue.ready(3));
            await().atMost(Duration.ofSeconds(20)).until(() -> Queue.NOT_ENABLED.equals(queues.find("dlq.closed")));
            await().atMost(Duration.ofSeconds(20)).until(() -> Queue.MISSING.equals(queues.find("dlq.none")));

            queues.create("dlq.none", 2, Map.of("errors.deadletterqueue.group.enable", "true"))
                    .get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(20)).until(() -> Queue.ready(2).equals(queues.find("dlq.none")));
            assertThat(queues.create("dlq.none", 2, Map.of()))
                    .failsWithin(Duration.ofSeconds(30)).withThrowableThat().havingRootCause()
                    .isInstanceOf(TopicExistsException.class);
        }
    }

    @Test
    void shouldAppendLettersAndFindTheSharePartitionsTrailingOnesAgain() throws Exception {
        TopicPartition queue = new TopicPartition("dlq.lookup", 0);
        try (Admin admin = admin(); UpstreamDeadLetterQueues queues = open()) {
            admin.createTopics(List.of(new NewTopic(queue.topic(), 1, (short) 1)
                    .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get(30, TimeUnit.SECONDS);
            // g's letters of offsets 1 and 2 (ARCHIVED since), another group's letter, then g's
            // letters of offsets 5 and 7: the ones a takeover finds still ARCHIVING
            assertThat(append(queues, queue, letter("g", 1), letter("g", 2))).isEqualTo(DeadLetterQueues.Appended.OK);
            assertThat(append(queues, queue, letter("other", 3))).isEqualTo(DeadLetterQueues.Appended.OK);
            assertThat(append(queues, queue, letter("g", 5), letter("g", 7))).isEqualTo(DeadLetterQueues.Appended.OK);

            assertThat(queues.inQueue(queue, "g", SOURCE, Set.of("5:1", "7:1", "9:1")).get(30, TimeUnit.SECONDS))
                    .as("the trailing letters that are candidates").containsExactlyInAnyOrder("5:1", "7:1");
            assertThat(queues.inQueue(queue, "g", SOURCE, Set.of("1:1", "2:1")).get(30, TimeUnit.SECONDS))
                    .as("letters behind one that is no candidate are not looked for").isEmpty();
            assertThat(queues.inQueue(queue, "g", new TopicPartition("orders", 1), Set.of("5:1"))
                    .get(30, TimeUnit.SECONDS)).as("another source partition's").isEmpty();
            assertThat(queues.mayLandAfterFailure()).isTrue();
        }
    }

    @Test
    void shouldReportARefusalForGoodWithTheUpstreamsError() throws Exception {
        TopicPartition queue = new TopicPartition("dlq.small", 0);
        try (Admin admin = admin(); UpstreamDeadLetterQueues queues = open()) {
            admin.createTopics(List.of(new NewTopic(queue.topic(), 1, (short) 1).configs(Map.of(
                    "errors.deadletterqueue.group.enable", "true", "max.message.bytes", "1024"))))
                    .all().get(30, TimeUnit.SECONDS);
            SimpleRecord large = new SimpleRecord(System.currentTimeMillis(), (byte[]) null, new byte[4096],
                    headers("g", 1).toArray(Header[]::new));
            assertThat(append(queues, queue, large).error()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        }
    }

    private static DeadLetterQueues.Appended append(UpstreamDeadLetterQueues queues, TopicPartition queue,
            SimpleRecord... letters) throws Exception {
        return queues.append(queue, List.of(letters)).get(30, TimeUnit.SECONDS);
    }

    /** A dead letter of {@link #SOURCE}'s record at {@code offset}, first delivered and dead, with Kafka's headers. */
    private static SimpleRecord letter(String group, long offset) {
        return new SimpleRecord(System.currentTimeMillis(), (byte[]) null, null, headers(group, offset).toArray(Header[]::new));
    }

    private static List<Header> headers(String group, long offset) {
        List<Header> h = new ArrayList<>();
        h.add(header("__dlq.errors.topic", SOURCE.topic()));
        h.add(header("__dlq.errors.partition", Integer.toString(SOURCE.partition())));
        h.add(header("__dlq.errors.offset", Long.toString(offset)));
        h.add(header("__dlq.errors.group", group));
        h.add(header("__dlq.errors.delivery.count", "1"));
        h.add(header("__dlq.errors.message", "rejected"));
        return h;
    }

    private static Header header(String key, String value) {
        return new RecordHeader(key, value.getBytes(StandardCharsets.UTF_8));
    }

    private static UpstreamDeadLetterQueues open() {
        return UpstreamDeadLetterQueues.open(Map.of("bootstrap.servers", UPSTREAM.bootstrapServers()),
                Duration.ofSeconds(10));
    }

    private static Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", UPSTREAM.bootstrapServers()));
    }
}
