package io.pier.cli;

import static io.pier.cli.AdminCli.TIMEOUT_MS;
import static io.pier.cli.AdminCli.admin;
import static io.pier.cli.AdminCli.failed;
import static io.pier.cli.AdminCli.logEndOffsets;
import static io.pier.cli.AdminCli.sortedPartitions;
import static io.pier.cli.AdminCli.table;
import static io.pier.cli.AdminCli.value;

import io.pier.server.BrokerConfig;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code pier share-group --bootstrap-server HOST:PORT --group G [--metrics-url URL | --no-metrics]}:
 * one share group at a glance, for when no dashboard runs.
 *
 * <p>Members, start offsets, lag and log end offsets come from the Kafka wire APIs (Admin:
 * DescribeShareGroups, DescribeShareGroupOffsets, ListOffsets), so they work against any broker.
 * The wire APIs do not carry in-flight records by state, the end offset of the in-flight window,
 * the oldest record's age or what each member holds; those are read from Pier's metrics endpoint
 * (by default port 9404 on the bootstrap host), and shown as "-" with a note when it cannot be read.
 */
final class ShareGroupCommand {
    private ShareGroupCommand() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        String bootstrap = null;
        String group = null;
        String metricsUrl = null;
        boolean metrics = true;
        try {
            for (int i = 1; i < args.length; i++) {
                switch (args[i]) {
                    case "--bootstrap-server" -> bootstrap = value(args, ++i);
                    case "--group" -> group = value(args, ++i);
                    case "--metrics-url" -> metricsUrl = value(args, ++i);
                    case "--no-metrics" -> metrics = false;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bootstrap == null || group == null) {
                throw new IllegalArgumentException("--bootstrap-server and --group are required");
            }
        } catch (IllegalArgumentException e) {
            err.println("pier: " + e.getMessage());
            usage(err);
            return 2;
        }
        if (metrics && metricsUrl == null) {
            metricsUrl = "http://" + host(bootstrap) + ":" + BrokerConfig.DEFAULT_METRICS_PORT + "/metrics";
        }
        try (Admin admin = admin(bootstrap)) {
            ShareGroupDescription description = admin.describeShareGroups(List.of(group)).describedGroups()
                    .get(group).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin
                    .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(group).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            TreeSet<TopicPartition> partitions = sortedPartitions();
            partitions.addAll(offsets.keySet());
            description.members().forEach(m -> partitions.addAll(m.assignment().topicPartitions()));
            Map<TopicPartition, Long> logEnd = logEndOffsets(admin, partitions);
            MetricsScrape scrape = null;
            String metricsNote = "not read (--no-metrics)";
            if (metrics) {
                try {
                    scrape = MetricsScrape.fetch(metricsUrl, Duration.ofSeconds(5));
                    metricsNote = "from " + metricsUrl;
                } catch (Exception e) {
                    metricsNote = "unavailable, cannot read " + metricsUrl + " (" + e + ")";
                }
            }
            print(out, description, partitions, offsets, logEnd, scrape, metricsNote);
            return 0;
        } catch (ExecutionException | TimeoutException | InterruptedException e) {
            return failed(err, "describe share group " + group, bootstrap, e);
        }
    }

    private static void print(PrintStream out, ShareGroupDescription d, TreeSet<TopicPartition> partitions,
            Map<TopicPartition, SharePartitionOffsetInfo> offsets, Map<TopicPartition, Long> logEnd,
            MetricsScrape scrape, String metricsNote) {
        out.printf("Share group %s: state %s, group epoch %d, %d member(s)%n", d.groupId(), d.groupState(),
                d.groupEpoch(), d.members().size());
        out.println("In-flight records, window end offset, oldest age and records held: " + metricsNote);
        out.println();
        List<String[]> members = new ArrayList<>();
        members.add(new String[] {"MEMBER", "CLIENT-ID", "HOST", "ASSIGNED", "ACQUIRED"});
        List<ShareMemberDescription> sorted = new ArrayList<>(d.members());
        sorted.sort(Comparator.comparing(ShareMemberDescription::consumerId));
        for (ShareMemberDescription m : sorted) {
            String held = scrape == null ? "-" : count(scrape.value("pier_share_member_acquired_records",
                    Map.of("group", d.groupId(), "member", m.consumerId())), true);
            members.add(new String[] {m.consumerId(), m.clientId(), m.host(),
                    String.valueOf(m.assignment().topicPartitions().size()), held});
        }
        table(out, members);
        out.println();
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"TOPIC", "PARTITION", "START-OFFSET", "END-OFFSET", "LOG-END-OFFSET", "LAG",
            "AVAILABLE", "BACKOFF", "ACQUIRED", "ACKNOWLEDGED", "ARCHIVING", "ARCHIVED", "OLDEST-AGE",
            "BLOCKED-KEYS"});
        for (TopicPartition tp : partitions) {
            Map<String, String> labels = Map.of("group", d.groupId(), "topic", tp.topic(),
                    "partition", String.valueOf(tp.partition()));
            SharePartitionOffsetInfo info = offsets.get(tp);
            Optional<Long> lag = info == null ? Optional.empty() : info.lag();
            String[] row = {tp.topic(), String.valueOf(tp.partition()),
                info == null || info.startOffset() < 0 ? "-" : String.valueOf(info.startOffset()),
                "-", logEnd.containsKey(tp) ? String.valueOf(logEnd.get(tp)) : "-",
                lag.map(String::valueOf).orElse("-"), "-", "-", "-", "-", "-", "-", "-", "-"};
            if (scrape != null) {
                row[3] = count(scrape.value("pier_share_end_offset", labels), false);
                // Columns 6 to 11: AVAILABLE, BACKOFF (available, waiting for a release backoff), then the others.
                String[] states = {"available", null, "acquired", "acknowledged", "archiving", "archived"};
                for (int i = 0; i < states.length; i++) {
                    if (states[i] == null) {
                        row[6 + i] = count(scrape.value("pier_share_backoff_records", labels), false);
                        continue;
                    }
                    Map<String, String> withState = new HashMap<>(labels);
                    withState.put("state", states[i]);
                    row[6 + i] = count(scrape.value("pier_share_in_flight_records", withState), false);
                }
                double age = scrape.value("pier_share_oldest_unacknowledged_age_seconds", labels);
                row[12] = Double.isNaN(age) ? "-" : String.format(Locale.ROOT, "%.1fs", age);
                row[13] = count(scrape.value("pier_share_blocked_keys", labels), false);
            }
            rows.add(row);
        }
        table(out, rows);
    }

    /** A whole number, or "-" when the metric is absent (0 instead when {@code absentIsZero}). */
    private static String count(double v, boolean absentIsZero) {
        if (Double.isNaN(v)) {
            return absentIsZero ? "0" : "-";
        }
        return String.valueOf((long) v);
    }

    private static String host(String bootstrap) {
        String first = bootstrap.split(",")[0].strip();
        int colon = first.lastIndexOf(':');
        return colon < 0 ? first : first.substring(0, colon);
    }

    static void usage(PrintStream s) {
        s.println("usage: pier share-group --bootstrap-server HOST:PORT --group GROUP"
                + " [--metrics-url URL | --no-metrics]");
        s.println("  One share group at a glance: members, and per partition the start offset, lag and log end");
        s.println("  offset (Kafka wire APIs), plus the in-flight window end, records by state (BACKOFF: available");
        s.println("  but waiting for a release backoff; ARCHIVING: dead, waiting for its dead letter), oldest age,");
        s.println("  keys with a record waiting behind an earlier one (BLOCKED-KEYS, groups ordered by key) and");
        s.println("  records each member holds, read from Pier's metrics endpoint (default: port "
                + BrokerConfig.DEFAULT_METRICS_PORT + " on the bootstrap host).");
    }
}
