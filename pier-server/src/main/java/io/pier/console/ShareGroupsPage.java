package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * {@code /share-groups}: every share group the viewer may describe, with its share-partitions added
 * up. On a gateway of several nodes: the groups this node coordinates or serves share-partitions
 * of, those here added up, and which node coordinates each.
 */
final class ShareGroupsPage {
    static final String PATH = "/share-groups";
    private static final List<Html.Column> COLUMNS = List.of(Html.Column.text("Group"), Html.Column.text("State"),
            Html.Column.num("Share-partitions"), Html.Column.num("Lag"), Html.Column.num("Oldest unacknowledged"),
            Html.Column.num("Acquired"), Html.Column.num("Archived"), Html.Column.num("Dead letters"));

    private ShareGroupsPage() {}

    private static final List<Html.Column> GATEWAY_COLUMNS = java.util.stream.Stream.concat(COLUMNS.stream(),
            java.util.stream.Stream.of(Html.Column.text("Coordinator"))).toList();

    /**
     * @param gateway whether this is a gateway node (then with a Coordinator column)
     * @param coordinatorElsewhere the other node coordinating a group, if another does
     */
    static Html render(Published p, Viewer viewer, boolean gateway,
            Function<String, Optional<ConsoleSources.NodeRef>> coordinatorElsewhere) {
        Predicate<String> topics = viewer.topics();
        Map<String, Figures.ShareGroupFigures> figures = Figures.byShareGroup(
                p.shares().stream().filter(s -> topics.test(s.topic())).collect(Collectors.toList()));
        Map<String, String> states = new TreeMap<>();
        for (GroupSnapshot.Listed g : Figures.listed(p.groups())) {
            if (g.type().equals(GroupSnapshot.SHARE) && viewer.group(g.group())) {
                states.put(g.group(), g.state());
            }
        }
        if (gateway) {
            // coordinated by another node, with share-partitions here
            figures.keySet().forEach(group -> {
                if (viewer.group(group)) {
                    states.putIfAbsent(group, "not known here");
                }
            });
        }
        List<Html.Column> columns = gateway ? GATEWAY_COLUMNS : COLUMNS;
        Html out = new Html();
        out.startTable("share-groups", columns);
        states.forEach((group, state) -> {
            Figures.ShareGroupFigures f = figures.getOrDefault(group, Figures.ShareGroupFigures.NONE);
            out.startRow(group).link("group", Html.href(ShareGroupPage.PATH, group), group).cell("state", state)
                    .number("share-partitions", f.sharePartitions()).number("lag", f.lag())
                    .ageMs("oldest-age", f.oldestUnacknowledgedAgeMs()).number("acquired", f.acquired())
                    .number("archived", f.archived()).number("dead-letters", f.deadLetters());
            if (gateway) {
                out.cell("coordinator", coordinatorElsewhere.apply(group).map(Object::toString).orElse("this node"));
            }
            out.endRow();
        });
        out.endTable(states.size(), columns.size(), "No share groups.");
        return out;
    }
}
