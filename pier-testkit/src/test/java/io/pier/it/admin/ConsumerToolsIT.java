package io.pier.it.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.share.ShareClients;
import io.pier.testkit.PierExtension;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.tools.ConsumerPerformance;
import org.apache.kafka.tools.VerifiableConsumer;
import org.apache.kafka.tools.consumer.ConsoleConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Kafka's consumer tools (kafka-tools 4.4) against Pier with a consumer group, each a short run
 * bounded by a message count and a timeout: kafka-console-consumer --group,
 * kafka-consumer-perf-test and kafka-verifiable-consumer.
 */
@Timeout(180)
class ConsumerToolsIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    private static Map<TopicPartition, OffsetAndMetadata> committed(String group) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        }
    }

    @Test
    void shouldConsumeAndCommitWithKafkaConsoleConsumerInAGroup() throws Exception {
        // Given 10 records on one partition
        clients.createTopic("console-orders", 1);
        clients.produce("console-orders", 0, "order", 10);

        // When kafka-console-consumer reads them in a group from the beginning
        KafkaTool.Result consumed = KafkaTool.run(ConsoleConsumer::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", "console-orders", "--group", "console-readers",
                "--from-beginning", "--max-messages", "10", "--timeout-ms", "60000");

        // Then it prints each record once and the group committed the end of what it read
        assertThat(consumed.out().lines().filter(l -> l.startsWith("order-")))
                .containsExactly("order-0", "order-1", "order-2", "order-3", "order-4", "order-5", "order-6",
                        "order-7", "order-8", "order-9");
        assertThat(consumed.err()).contains("Processed a total of 10 messages");
        assertThat(committed("console-readers").get(new TopicPartition("console-orders", 0)).offset()).isEqualTo(10);
    }

    @Test
    void shouldMeasureGroupConsumptionWithKafkaConsumerPerfTest() throws Exception {
        // Given 500 records over two partitions
        clients.createTopic("perf-orders", 2);
        clients.produce("perf-orders", 0, "p", 250);
        clients.produce("perf-orders", 1, "p", 250);

        // When kafka-consumer-perf-test reads 500 records in a group
        KafkaTool.Result perf = KafkaTool.run(ConsumerPerformance::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", "perf-orders", "--group", "perf-readers", "--messages", "500",
                "--timeout", "60000");

        // Then it reports exactly 500 consumed
        assertThat(perf.exitCode()).as(perf.out() + perf.err()).isZero();
        assertThat(KafkaTool.perfReportValue(perf, "data.consumed.in.nMsg")).isEqualTo("500");
    }

    @Test
    void shouldReportAssignmentConsumptionAndCommitsWithKafkaVerifiableConsumer() throws Exception {
        // Given 20 records over two partitions
        clients.createTopic("verify-orders", 2);
        clients.produce("verify-orders", 0, "v", 10);
        clients.produce("verify-orders", 1, "v", 10);

        // When kafka-verifiable-consumer reads 20 records in a group and commits synchronously
        KafkaTool.Result run = KafkaTool.run(VerifiableConsumer::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", "verify-orders", "--group-id", "verify-readers",
                "--group-protocol", "classic", "--reset-policy", "earliest", "--max-messages", "20");

        // Then its events show the assignment, 20 records consumed, successful commits and a clean end
        String out = run.out();
        assertThat(out).contains("\"name\":\"partitions_assigned\"");
        assertThat(out).contains("\"name\":\"offsets_committed\"").doesNotContain("\"success\":false");
        assertThat(out).contains("\"name\":\"shutdown_complete\"");
        long consumed = out.lines().filter(l -> l.contains("\"name\":\"records_consumed\""))
                .mapToLong(l -> Long.parseLong(l.replaceAll("^.*?\"count\":(\\d+).*$", "$1"))).sum();
        assertThat(consumed).isEqualTo(20);
        Map<TopicPartition, OffsetAndMetadata> offsets = committed("verify-readers");
        assertThat(offsets.get(new TopicPartition("verify-orders", 0)).offset()).isEqualTo(10);
        assertThat(offsets.get(new TopicPartition("verify-orders", 1)).offset()).isEqualTo(10);
    }

    @Test
    void shouldRunKafkaVerifiableConsumerAsAStaticCooperativeMemberWithAutoCommit() throws Exception {
        // Given 20 records over two partitions
        clients.createTopic("verify-static", 2);
        clients.produce("verify-static", 0, "s", 10);
        clients.produce("verify-static", 1, "s", 10);

        // When kafka-verifiable-consumer reads them as a static member with cooperative-sticky
        // assignment and auto-commit
        KafkaTool.Result run = KafkaTool.run(VerifiableConsumer::main, "--bootstrap-server",
                PIER.bootstrapServers(), "--topic", "verify-static", "--group-id", "verify-statics",
                "--group-protocol", "classic", "--group-instance-id", "static-1", "--assignment-strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "--enable-autocommit",
                "--reset-policy", "earliest", "--max-messages", "20");

        // Then it was assigned both partitions, consumed all 20 and ended cleanly
        String out = run.out();
        assertThat(out).contains("\"name\":\"partitions_assigned\"").contains("\"name\":\"shutdown_complete\"");
        long consumed = out.lines().filter(l -> l.contains("\"name\":\"records_consumed\""))
                .mapToLong(l -> Long.parseLong(l.replaceAll("^.*?\"count\":(\\d+).*$", "$1"))).sum();
        assertThat(consumed).isEqualTo(20);
    }
}
