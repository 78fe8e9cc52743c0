package io.pier.console;

import io.pier.metrics.ShareCounts;
import io.pier.metrics.SharePartitionSnapshot;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code /share-group?id=G}: one share group. Its settings, lag and oldest-age plots, members with
 * their assignments, every share-partition (offsets, records by state, lag, ages, blocked keys for
 * a key-ordered group, dead letters), archives by cause and the delivery-count distribution.
 */
final class ShareGroupPage {
    static final String PATH = "/share-group";
    private static final List<Html.Column> MEMBERS = List.of(Html.Column.text("Member"), Html.Column.text("Client"),
            Html.Column.text("Host"), Html.Column.num("Epoch"), Html.Column.num("Partitions"),
            Html.Column.text("Assigned"), Html.Column.num("Acquired"));
    private static final List<String> DELIVERY_BUCKETS = List.of("1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
            ">10");

    private static final List<Html.Column> ELSEWHERE = List.of(Html.Column.text("Share-partition"),
            Html.Column.text("Served by"));

    /**
     * What the page shows; {@code members} empty when the coordinator did not answer in time, or is
     * another gateway node ({@code coordinator}); {@code partitions} those served here, and {@code
     * elsewhere} the assigned ones other gateway nodes serve.
     */
    record Model(String group, String state, ConsoleSources.ShareGroupSettings settings,
            Optional<List<ConsoleSources.Member>> members, List<SharePartitionSnapshot> partitions, boolean gateway,
            Optional<ConsoleSources.NodeRef> coordinator, Map<TopicPartition, ConsoleSources.NodeRef> elsewhere,
            RingBuffer.Samples lag, RingBuffer.Samples oldestAge) {
        Model {
            elsewhere = Collections.unmodifiableMap(new LinkedHashMap<>(elsewhere));
        }
    }

    private ShareGroupPage() {}

    /** The group's share-partitions the viewer may see, sorted by topic and partition. */
    static List<SharePartitionSnapshot> partitionsOf(String group, Published p, Viewer viewer) {
        Predicate<String> topics = viewer.topics();
        return p.shares().stream().filter(s -> s.group().equals(group) && topics.test(s.topic()))
                .sorted(Comparator.comparing(SharePartitionSnapshot::topic)
                        .thenComparingInt(SharePartitionSnapshot::partition))
                .collect(Collectors.toList());
    }

    static Html render(Model m, Viewer viewer) {
        Html out = new Html();
        Figures.ShareGroupFigures total = Figures.ShareGroupFigures.NONE;
        for (SharePartitionSnapshot s : m.partitions()) {
            total = total.plus(s);
        }
        List<String> facts = new ArrayList<>(List.of("State", m.state(),
                "Ordering", m.settings().orderedByKey() ? "by key" : "none",
                "Dead-letter topic", m.settings().deadLetterTopic() == null ? "none" : m.settings().deadLetterTopic(),
                "Delivery count limit", String.valueOf(m.settings().deliveryCountLimit()),
                "Share-partitions", String.valueOf(total.sharePartitions()), "Lag", String.valueOf(total.lag()),
                "Oldest unacknowledged", Html.age(total.oldestUnacknowledgedAgeMs()),
                "Members", m.members().map(l -> String.valueOf(l.size())).orElse("?")));
        if (m.gateway()) {
            facts.addAll(List.of("Coordinator", m.coordinator().map(Object::toString).orElse("this node")));
        }
        out.facts("group-facts", facts);
        out.raw("<div class=\"plots\">");
        Plot.draw(out, "plot-lag", "Lag (records)", m.lag(), Plot.Unit.COUNT);
        Plot.draw(out, "plot-oldest-age", "Oldest unacknowledged record", m.oldestAge(), Plot.Unit.MILLIS);
        out.raw("</div>\n");
        members(out, m, viewer);
        SharePartitionsTable.render(out, m.partitions(), m.settings().orderedByKey());
        if (m.gateway()) {
            elsewhere(out, m);
        }
        archives(out, m.partitions());
        deliveryCounts(out, m.partitions());
        return out;
    }

    private static void members(Html out, Model m, Viewer viewer) {
        out.heading(2, "Members");
        if (m.coordinator().isPresent()) {
            out.note("muted", "The group's coordinator is " + m.coordinator().get()
                    + ": its console lists the members.");
            return;
        }
        if (m.members().isEmpty()) {
            out.note("muted", "The group's coordinator did not answer in time; reload to try again.");
            return;
        }
        Map<String, Integer> acquired = new HashMap<>();
        m.partitions().forEach(s -> s.acquiredByMember().forEach((member, n) -> acquired.merge(member, n, Integer::sum)));
        Predicate<String> topics = viewer.topics();
        out.startTable("members", MEMBERS);
        for (ConsoleSources.Member member : m.members().get()) {
            List<TopicPartition> assigned = new ArrayList<>();
            for (TopicPartition tp : member.assigned()) {
                if (topics.test(tp.topic())) {
                    assigned.add(tp);
                }
            }
            assigned.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            out.startRow(member.memberId()).cell("member", member.memberId()).cell("client", member.clientId())
                    .cell("host", member.clientHost()).number("epoch", member.memberEpoch())
                    .number("partitions", assigned.size()).cell("assigned", join(assigned))
                    .number("acquired", acquired.getOrDefault(member.memberId(), 0)).endRow();
        }
        out.endTable(m.members().get().size(), MEMBERS.size(), "No members.");
    }

    /**
     * A gateway node shows the share-partitions it serves; those of the members' assignments that
     * other nodes serve are named here, each with its node, whose console shows it.
     */
    private static void elsewhere(Html out, Model m) {
        out.heading(2, "Share-partitions served by other nodes");
        if (m.coordinator().isPresent()) {
            out.note("muted", "Known to the group's coordinator, " + m.coordinator().get() + ".");
            return;
        }
        out.startTable("served-elsewhere", ELSEWHERE);
        m.elsewhere().forEach((tp, node) -> {
            String name = tp.topic() + "-" + tp.partition();
            out.startRow(name).cell("share-partition", name).cell("node", node.toString()).endRow();
        });
        out.endTable(m.elsewhere().size(), ELSEWHERE.size(), "None: this node serves all the assigned ones.");
    }

    static String join(List<TopicPartition> partitions) {
        return partitions.stream().map(tp -> tp.topic() + "-" + tp.partition()).collect(Collectors.joining(" "));
    }

    private static void archives(Html out, List<SharePartitionSnapshot> partitions) {
        long rejected = 0;
        long limit = 0;
        long logStart = 0;
        long deadLetters = 0;
        long failures = 0;
        for (SharePartitionSnapshot s : partitions) {
            ShareCounts c = s.counts();
            rejected += c.archivedRejected();
            limit += c.archivedDeliveryLimit();
            logStart += c.archivedLogStart();
            deadLetters += c.deadLetters();
            failures += c.deadLetterFailures();
        }
        out.heading(2, "Archived records and dead letters");
        List<Html.Column> columns = List.of(Html.Column.text("Cause"), Html.Column.num("Records"));
        out.startTable("archives", columns);
        out.startRow("rejected").cell("cause", "rejected by a consumer").number("records", rejected).endRow();
        out.startRow("delivery_limit").cell("cause", "delivery limit reached").number("records", limit).endRow();
        out.startRow("log_start").cell("cause", "log start moved past").number("records", logStart).endRow();
        out.startRow("dead_letters").cell("cause", "dead letters written").number("records", deadLetters).endRow();
        out.startRow("dead_letter_failures").cell("cause", "archived without a dead letter")
                .number("records", failures).endRow();
        out.endTable(5, columns.size(), "");
    }

    private static void deliveryCounts(Html out, List<SharePartitionSnapshot> partitions) {
        long[] accepted = new long[ShareCounts.DELIVERY_COUNT_BUCKETS];
        long[] rejected = new long[ShareCounts.DELIVERY_COUNT_BUCKETS];
        for (SharePartitionSnapshot s : partitions) {
            for (int i = 0; i < accepted.length; i++) {
                accepted[i] += s.counts().acceptedByDeliveryCount().get(i);
                rejected[i] += s.counts().rejectedByDeliveryCount().get(i);
            }
        }
        out.heading(2, "Delivery count when acknowledged");
        List<Html.Column> columns = new ArrayList<>();
        columns.add(Html.Column.text("Acknowledged as"));
        DELIVERY_BUCKETS.forEach(b -> columns.add(Html.Column.num(b)));
        out.startTable("delivery-counts", columns);
        deliveryRow(out, "accept", accepted);
        deliveryRow(out, "reject", rejected);
        out.endTable(2, columns.size(), "");
    }

    private static void deliveryRow(Html out, String type, long[] counts) {
        out.startRow(type).cell("type", type);
        for (int i = 0; i < counts.length; i++) {
            out.number("d" + DELIVERY_BUCKETS.get(i).replace(">", "gt"), counts[i]);
        }
        out.endRow();
    }
}
