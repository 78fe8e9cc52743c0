package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** {@code /consumer-groups}: every consumer group (classic or consumer protocol) the viewer may describe. */
final class ConsumerGroupsPage {
    static final String PATH = "/consumer-groups";
    private static final List<Html.Column> COLUMNS = List.of(Html.Column.text("Group"), Html.Column.text("Protocol"),
            Html.Column.text("State"), Html.Column.num("Committed partitions"), Html.Column.num("Lag"));

    private ConsumerGroupsPage() {}

    static Html render(Published p, Viewer viewer) {
        Predicate<String> topics = viewer.topics();
        Map<String, Integer> partitions = new HashMap<>();
        Map<String, Long> lag = new HashMap<>();
        for (Figures.CommittedRow c : Figures.committed(p.groups(), p.logs())) {
            if (topics.test(c.partition().topic())) {
                partitions.merge(c.group(), 1, Integer::sum);
                lag.merge(c.group(), c.lag(), Long::sum);
            }
        }
        List<GroupSnapshot.Listed> groups = Figures.listed(p.groups()).stream()
                .filter(g -> !g.type().equals(GroupSnapshot.SHARE) && viewer.group(g.group()))
                .sorted(Comparator.comparing(GroupSnapshot.Listed::group))
                .collect(Collectors.toList());
        Html out = new Html();
        out.startTable("consumer-groups", COLUMNS);
        for (GroupSnapshot.Listed g : groups) {
            out.startRow(g.group()).link("group", Html.href(ConsumerGroupPage.PATH, g.group()), g.group())
                    .cell("protocol", g.type()).cell("state", g.state())
                    .number("partitions", partitions.getOrDefault(g.group(), 0))
                    .number("lag", lag.getOrDefault(g.group(), 0L)).endRow();
        }
        out.endTable(groups.size(), COLUMNS.size(), "No consumer groups.");
        return out;
    }
}
