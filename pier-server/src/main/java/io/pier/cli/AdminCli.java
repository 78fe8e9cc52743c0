package io.pier.cli;

import java.io.PrintStream;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** What the group commands ({@link ShareGroupCommand}, {@link GroupCommand}) share: the Admin client, arguments, tables. */
final class AdminCli {
    /** One bound for every call: a command that waits longer than this for a broker tells the user instead. */
    static final long TIMEOUT_MS = 15_000;

    private AdminCli() {}

    static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT_MS));
    }

    /** Partitions by topic name, then number, as the tables list them. */
    static TreeSet<TopicPartition> sortedPartitions() {
        return new TreeSet<>(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
    }

    /** Each partition's log end offset (high watermark), by ListOffsets; none asked, none sent. */
    static Map<TopicPartition, Long> logEndOffsets(Admin admin, Collection<TopicPartition> partitions)
            throws InterruptedException, ExecutionException, TimeoutException {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        partitions.forEach(tp -> specs.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, Long> out = new HashMap<>();
        if (specs.isEmpty()) {
            return out;
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> got =
                admin.listOffsets(specs).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        got.forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    /**
     * Says why a command's Admin call failed and returns its exit code, 1: the broker's answer
     * ({@code action}: what the command was doing), no answer in time, or an interrupt.
     */
    static int failed(PrintStream err, String action, String bootstrap, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        } else if (e instanceof TimeoutException) {
            err.println("pier: no answer from " + bootstrap + " within " + TIMEOUT_MS + " ms");
        } else {
            err.println("pier: cannot " + action + ": " + (e.getCause() == null ? e : e.getCause()).getMessage());
        }
        return 1;
    }

    /** The value after option {@code args[i - 1]}; a missing one names that option. */
    static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    /** Left-aligned columns, two spaces apart, the first row the header. */
    static void table(PrintStream out, List<String[]> rows) {
        int[] widths = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                widths[i] = Math.max(widths[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == r.length - 1 ? r[i] : String.format("%-" + (widths[i] + 2) + "s", r[i]));
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
