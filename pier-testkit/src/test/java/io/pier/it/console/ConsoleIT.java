package io.pier.it.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;

/**
 * The web console in headless Chromium against a broker fed by the stock clients: every page
 * renders, its figures are the ones Kafka's Admin client reports (share group members, their
 * partitions and start offsets; topic partition counts; consumer group committed offsets and lag),
 * a plot moves while records flow without reloading the page, and the browser logs no error.
 * Screenshots of each page go to {@code target/console-screenshots}.
 */
@Timeout(150)
class ConsoleIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A share group whose name HTML would take for markup. */
    private static final String SHARE_GROUP = "workers<b>&\"q'";
    private static final String JOBS = "console-jobs";
    private static final String DLQ = "dlq.console";
    private static final String ORDERS = "console-orders";
    private static final String READERS = "console-readers";

    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("pier.metrics.snapshot.interval.ms", "100",
            "pier.console.sample.interval.ms", "200", "group.initial.rebalance.delay.ms", "0");

    private static Browser browser;
    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    /** Once for the class; per test, so that without Chromium each test reports itself skipped. */
    @BeforeEach
    void startBrowser() {
        if (browser == null) {
            browser = Browser.start();
        }
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.close();
        }
    }

    private static String console(String path) {
        return "http://127.0.0.1:" + PIER.pier().metricsPort() + path;
    }

    /**
     * Given 30 records over 3 partitions read by one share consumer that accepts 29 and rejects one:
     * the share group page shows the member Admin describes with the 3 partitions assigned to it,
     * each share-partition's start offset as listShareGroupOffsets reports it, 29 records accepted
     * at their first delivery and one archived as rejected with its dead letter in the group's
     * dead-letter topic (whose end offset Admin lists), and the group's name as text; then,
     * with the consumer holding records it does not acknowledge and new records arriving, the lag
     * and oldest-age plots move on the open page.
     */
    @Test
    void shouldShowShareGroupsAsAdminDescribesThemAndMoveThePlotsWhileRecordsFlow() throws Exception {
        clients.createTopic(JOBS, 3);
        try (Admin admin = clients.admin()) {
            admin.createTopics(List.of(new NewTopic(DLQ, 1, (short) 1)
                    .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get(30, TimeUnit.SECONDS);
        }
        clients.setGroupConfig(SHARE_GROUP, "share.auto.offset.reset", "earliest");
        clients.setGroupConfig(SHARE_GROUP, "errors.deadletterqueue.topic.name", DLQ);
        for (int p = 0; p < 3; p++) {
            clients.produce(JOBS, p, "job" + p, 10);
        }
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(SHARE_GROUP, "explicit");
                Admin admin = clients.admin()) {
            consumer.subscribe(Set.of(JOBS));
            int received = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (received < 30 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    received++;
                    consumer.acknowledge(r, r.value().equals("job0-0") ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
                }
                consumer.commitSync();
            }
            assertThat(received).isEqualTo(30);

            browser.open(console("/share-groups"));
            awaitPage(() -> assertThat(cellValue("share-groups", SHARE_GROUP, "share-partitions")).isEqualTo("3"));
            browser.screenshot("share-groups");
            // The table is redrawn while records flow: a link found a moment ago may be gone.
            fresh(() -> {
                browser.driver.findElement(By.cssSelector("#share-groups td[data-field=group] a")).click();
                return "";
            });

            ShareGroupDescription described = admin.describeShareGroups(List.of(SHARE_GROUP)).describedGroups()
                    .get(SHARE_GROUP).get(30, TimeUnit.SECONDS);
            assertThat(described.members()).hasSize(1);
            ShareMemberDescription member = described.members().iterator().next();
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                    Map.of(SHARE_GROUP, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(SHARE_GROUP)
                    .get(30, TimeUnit.SECONDS);
            assertThat(offsets).hasSize(3);
            TopicPartition dlq0 = new TopicPartition(DLQ, 0);
            await().atMost(WAIT).until(() -> admin.listOffsets(Map.of(dlq0, OffsetSpec.latest())).partitionResult(dlq0)
                    .get(30, TimeUnit.SECONDS).offset() == 1);
            long deadLetters = admin.listOffsets(Map.of(dlq0, OffsetSpec.latest())).partitionResult(dlq0)
                    .get(30, TimeUnit.SECONDS).offset();
            awaitPage(() -> {
                assertThat(browser.driver.findElement(By.tagName("h1")).getText())
                        .isEqualTo("Share group " + SHARE_GROUP);
                assertThat(browser.driver.findElements(By.cssSelector("h1 b"))).isEmpty();
                String memberRow = member.consumerId();
                assertThat(cellValue("members", memberRow, "partitions"))
                        .isEqualTo(String.valueOf(member.assignment().topicPartitions().size()));
                assertThat(cellText("members", memberRow, "assigned")).isEqualTo(sorted(member.assignment()
                        .topicPartitions()));
                for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : offsets.entrySet()) {
                    String row = e.getKey().topic() + "-" + e.getKey().partition();
                    assertThat(cellValue("share-partitions", row, "start-offset"))
                            .as("start offset of %s", row).isEqualTo(String.valueOf(e.getValue().startOffset()));
                }
                assertThat(cellValue("delivery-counts", "accept", "d1")).isEqualTo("29");
                assertThat(cellValue("archives", "rejected", "records")).isEqualTo("1");
                assertThat(cellValue("archives", "dead_letters", "records")).isEqualTo(String.valueOf(deadLetters));
                assertThat(browser.driver.findElement(By.id("group-facts")).getText()).contains(DLQ);
            });
            browser.screenshot("share-group");

            // The consumer takes records and holds them; more keep coming: lag and age grow.
            long lagBefore = plotLast("plot-lag");
            String pointsBefore = plotPoints("plot-lag");
            AtomicBoolean producing = new AtomicBoolean(true);
            Thread producer = new Thread(() -> produceUntilStopped(producing), "console-it-producer");
            producer.start();
            try {
                List<ConsumerRecord<String, String>> held = new ArrayList<>();
                long holdDeadline = System.nanoTime() + WAIT.toNanos();
                while (held.isEmpty() && System.nanoTime() < holdDeadline) {
                    consumer.poll(Duration.ofMillis(200)).forEach(held::add);
                }
                assertThat(held).isNotEmpty();
                long ageSeen = plotLast("plot-oldest-age");
                awaitPage(() -> {
                    assertThat(plotLast("plot-lag")).isGreaterThan(lagBefore);
                    assertThat(plotPoints("plot-lag")).isNotEqualTo(pointsBefore);
                    assertThat(plotLast("plot-oldest-age")).isGreaterThan(Math.max(ageSeen, 500));
                });
                browser.screenshot("share-group-flowing");
            } finally {
                producing.set(false);
                producer.join(10_000);
            }
        }
        assertThat(browser.consoleErrors()).isEmpty();
    }

    /**
     * Given a classic consumer group that read 8 and 5 records from two partitions and committed
     * offsets 3 and 5: the consumer groups page lists it, its page shows the member Admin describes
     * and, per partition, the committed offset, high watermark and lag Admin's offsets give; the
     * overview shows each topic with the partition count Admin describes, and request rates.
     */
    @Test
    void shouldShowConsumerGroupLagAndTopicsAsAdminReportsThem() throws Exception {
        clients.createTopic(ORDERS, 2);
        clients.produce(ORDERS, 0, "o0", 8);
        clients.produce(ORDERS, 1, "o1", 5);
        TopicPartition p0 = new TopicPartition(ORDERS, 0);
        TopicPartition p1 = new TopicPartition(ORDERS, 1);
        try (KafkaConsumer<String, String> consumer = classicConsumer(READERS); Admin admin = clients.admin()) {
            consumer.subscribe(List.of(ORDERS));
            int received = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (received < 13 && System.nanoTime() < deadline) {
                received += consumer.poll(Duration.ofMillis(200)).count();
            }
            assertThat(received).isEqualTo(13);
            consumer.commitSync(Map.of(p0, new OffsetAndMetadata(3), p1, new OffsetAndMetadata(5)));

            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(READERS)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (TopicPartition tp : committed.keySet()) {
                ends.put(tp, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
                        .get(30, TimeUnit.SECONDS).offset());
            }
            ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(READERS)).describedGroups()
                    .get(READERS).get(30, TimeUnit.SECONDS);
            assertThat(group.members()).hasSize(1);
            MemberDescription member = group.members().iterator().next();

            // The console-log check sees errors: a page the broker does not have is one.
            browser.consoleErrors();
            browser.open(console("/no-such-page"));
            await().atMost(WAIT).untilAsserted(() -> assertThat(browser.consoleErrors()).isNotEmpty());

            browser.open(console("/consumer-groups"));
            awaitPage(() -> assertThat(cellValue("consumer-groups", READERS, "partitions")).isEqualTo("2"));
            browser.screenshot("consumer-groups");
            browser.open(console("/consumer-group?id=" + URLEncoder.encode(READERS, StandardCharsets.UTF_8)));
            awaitPage(() -> {
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : committed.entrySet()) {
                    String row = e.getKey().topic() + "-" + e.getKey().partition();
                    long end = ends.get(e.getKey());
                    assertThat(cellValue("offsets", row, "committed")).isEqualTo(String.valueOf(e.getValue().offset()));
                    assertThat(cellValue("offsets", row, "high-watermark")).isEqualTo(String.valueOf(end));
                    assertThat(cellValue("offsets", row, "lag")).as("lag of %s", row)
                            .isEqualTo(String.valueOf(end - e.getValue().offset()));
                }
                assertThat(cellText("members", member.consumerId(), "assigned"))
                        .isEqualTo(sorted(member.assignment().topicPartitions()));
            });
            browser.screenshot("consumer-group");

            Map<String, Integer> partitionCounts = admin.describeTopics(List.of(ORDERS, JOBS)).allTopicNames()
                    .get(30, TimeUnit.SECONDS).entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().partitions().size()));
            browser.open(console("/"));
            awaitPage(() -> {
                partitionCounts.forEach((topic, n) ->
                        assertThat(cellValue("topics", topic, "partitions")).as(topic).isEqualTo(String.valueOf(n)));
                assertThat(Long.parseLong(cellValue("requests", "Produce", "total"))).isPositive();
            });
            browser.screenshot("overview");
        }
        assertThat(browser.consoleErrors()).isEmpty();
    }

    private static KafkaConsumer<String, String> classicConsumer(String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("group.id", group);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static void produceUntilStopped(AtomicBoolean producing) {
        Properties p = new Properties();
        p.put("bootstrap.servers", PIER.bootstrapServers());
        p.put("linger.ms", "0");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; producing.get() && i < 5_000; i++) {
                // Paced load for the plots: a record lost now and then would only slow them down.
                Future<RecordMetadata> unused = producer.send(new ProducerRecord<>(JOBS, i % 3, null, "more-" + i));
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Partitions as the console lists them: topic-partition, sorted, space-separated. */
    private static String sorted(Set<TopicPartition> partitions) {
        return partitions.stream().sorted((a, b) -> a.topic().equals(b.topic())
                        ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()))
                .map(tp -> tp.topic() + "-" + tp.partition()).collect(Collectors.joining(" "));
    }

    /** Checks until they hold; the page reloads its content meanwhile, so elements are looked up each time. */
    private static void awaitPage(org.awaitility.core.ThrowingRunnable checks) {
        await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(checks);
    }

    private static WebElement cell(String table, String rowKey, String field) {
        return browser.cell(table, rowKey, field);
    }

    private static String cellValue(String table, String rowKey, String field) {
        return cell(table, rowKey, field).getDomAttribute("data-value");
    }

    private static String cellText(String table, String rowKey, String field) {
        return cell(table, rowKey, field).getText();
    }

    private static long plotLast(String id) {
        return Long.parseLong(fresh(() -> browser.driver.findElement(By.id(id)).getDomAttribute("data-last")));
    }

    private static String plotPoints(String id) {
        return fresh(() -> {
            List<WebElement> lines = browser.driver.findElements(By.cssSelector("#" + id + " polyline"));
            return lines.isEmpty() ? "" : lines.get(0).getDomAttribute("points");
        });
    }

    /**
     * {@code read} again when the page replaced the element between its lookup and the read: the
     * plots are redrawn while records flow, so an element found a moment ago may be gone.
     */
    private static String fresh(Supplier<String> read) {
        for (int attempt = 1; ; attempt++) {
            try {
                return read.get();
            } catch (StaleElementReferenceException e) {
                if (attempt == 10) {
                    throw e;
                }
            }
        }
    }
}
