package io.pier.it.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.it.share.ShareClients;
import io.pier.server.Pier;
import io.pier.testkit.UpstreamKafka;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The web console of gateway nodes, in headless Chromium: two nodes over one upstream Kafka split
 * a share group's share-partitions between them. Each node's group page shows the share-partitions
 * it serves (those Admin names it the leader of), with their start offsets, and names the node
 * serving each of the others; the coordinator lists the members, the other node names the
 * coordinator (the node Admin finds the group's coordinator at). The groups page of each node lists
 * the group with its coordinator.
 */
@Timeout(180)
class GatewayConsoleIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TOPIC = "gw-console";
    private static final String GROUP = "gw-readers";
    private static final int PARTITIONS = 6;
    private static final int PER_PARTITION = 10;

    @RegisterExtension
    static final UpstreamKafka UPSTREAM = UpstreamKafka.builder().build();

    private static Browser browser;
    private final List<Pier> nodes = new ArrayList<>();

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

    @AfterEach
    void stopNodes() {
        nodes.forEach(Pier::close);
    }

    @Test
    void eachNodeShowsTheSharePartitionsItServesAndNamesTheNodeForTheRest() throws Exception {
        for (int id = 1; id <= 2; id++) {
            nodes.add(Pier.builder().config("node.id", String.valueOf(id))
                    .config("pier.gateway.upstream.bootstrap.servers", UPSTREAM.bootstrapServers())
                    .config("pier.gateway.session.timeout.ms", "6000")
                    .config("pier.metrics.snapshot.interval.ms", "100").start());
        }
        String bootstrap = nodes.get(0).bootstrapServers() + "," + nodes.get(1).bootstrapServers();
        ShareClients clients = new ShareClients(bootstrap);
        clients.createTopic(TOPIC, PARTITIONS);
        clients.setGroupConfig(GROUP, "share.auto.offset.reset", "earliest");
        for (int p = 0; p < PARTITIONS; p++) {
            clients.produce(TOPIC, p, "r" + p, PER_PARTITION);
        }
        Map<Integer, Integer> leaders;
        int coordinator;
        try (Admin admin = clients.admin()) {
            // both nodes serve some of the share-partitions
            await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                    assertThat(new HashSet<>(leaders(admin).values())).containsExactlyInAnyOrder(1, 2));
            leaders = leaders(admin);
            try (KafkaShareConsumer<String, String> consumer = clients.consumer(GROUP, "explicit")) {
                consumer.subscribe(Set.of(TOPIC));
                int received = 0;
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (received < PARTITIONS * PER_PARTITION && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        received++;
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    consumer.commitSync();
                }
                assertThat(received).isEqualTo(PARTITIONS * PER_PARTITION);
                coordinator = admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP)
                        .get(30, TimeUnit.SECONDS).coordinator().id();
                assertThat(leaders).as("the split did not move while consuming").isEqualTo(leaders(admin));

                for (int i = 0; i < nodes.size(); i++) {
                    Pier node = nodes.get(i);
                    int me = i + 1;
                    int other = 3 - me;
                    String otherNode = "node " + other + " (" + nodes.get(other - 1).bootstrapServers() + ")";
                    browser.open("http://127.0.0.1:" + node.metricsPort() + "/share-group?id="
                            + URLEncoder.encode(GROUP, StandardCharsets.UTF_8));
                    awaitPage(() -> {
                        for (int p = 0; p < PARTITIONS; p++) {
                            String row = TOPIC + "-" + p;
                            if (leaders.get(p) == me) {
                                assertThat(browser.cell("share-partitions", row, "start-offset")
                                        .getDomAttribute("data-value")).as("node %d, %s", me, row)
                                        .isEqualTo(String.valueOf(PER_PARTITION));
                            } else {
                                assertThat(rowsWithKey("share-partitions", row)).as("node %d, %s", me, row).isZero();
                            }
                        }
                        String facts = browser.driver.findElement(By.id("group-facts")).getText();
                        if (me == coordinator) {
                            assertThat(facts).contains("this node");
                            assertThat(browser.driver.findElements(By.cssSelector("#members tbody tr"))).hasSize(1);
                            Map<String, String> elsewhere = new TreeMap<>();
                            for (int p = 0; p < PARTITIONS; p++) {
                                if (leaders.get(p) != me) {
                                    elsewhere.put(TOPIC + "-" + p, otherNode);
                                }
                            }
                            assertThat(servedElsewhere()).as("node %d names the other node's", me)
                                    .isEqualTo(elsewhere);
                        } else {
                            assertThat(facts).contains(otherNode);
                            assertThat(browser.driver.findElement(By.tagName("main")).getText())
                                    .contains("The group's coordinator is " + otherNode);
                        }
                    });
                    browser.screenshot("gateway-share-group-node-" + me);

                    browser.open("http://127.0.0.1:" + node.metricsPort() + "/share-groups");
                    awaitPage(() -> assertThat(browser.cell("share-groups", GROUP, "coordinator").getText())
                            .isEqualTo(me == coordinator ? "this node" : otherNode));
                }
            }
        }
        assertThat(browser.consoleErrors()).isEmpty();
    }

    /** The served-elsewhere table, share-partition to node. */
    private static Map<String, String> servedElsewhere() {
        Map<String, String> out = new TreeMap<>();
        for (WebElement row : browser.driver.findElements(By.cssSelector("#served-elsewhere tbody tr[data-key]"))) {
            out.put(row.getDomAttribute("data-key"), row.findElement(By.cssSelector("td[data-field=node]")).getText());
        }
        return out;
    }

    private static int rowsWithKey(String table, String key) {
        return browser.driver.findElements(By.cssSelector("#" + table + " tr[data-key=\"" + Browser.cssString(key)
                + "\"]")).size();
    }

    /** The gateway node leading each partition: the one serving its share-partitions' state. */
    private static Map<Integer, Integer> leaders(Admin admin) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
        Map<Integer, Integer> out = new TreeMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
        }
        return out;
    }

    /** Checks until they hold; the page reloads its content meanwhile, so elements are looked up each time. */
    private static void awaitPage(org.awaitility.core.ThrowingRunnable checks) {
        await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(checks);
    }
}
