package io.pier.console;

import io.pier.metrics.GroupSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** {@code /}: the broker, its topics with partitions and log sizes, and request rates by API. */
final class OverviewPage {
    private static final List<Html.Column> TOPICS = List.of(Html.Column.text("Topic"), Html.Column.num("Partitions"),
            Html.Column.num("Log size"), Html.Column.num("Records in the log"));
    private static final List<Html.Column> RATES = List.of(Html.Column.text("API"),
            Html.Column.num("Requests/s"), Html.Column.num("Requests since start"));

    private OverviewPage() {}

    static Html render(Published p, Viewer viewer, ConsoleSources.BrokerFacts broker,
            Map<String, Sampler.RequestRate> rates, long uptimeMs) {
        Html out = new Html();
        Map<String, Figures.TopicFigures> topics = Figures.byTopic(p.logs());
        topics.keySet().removeIf(t -> !viewer.topic(t));
        int partitions = 0;
        long bytes = 0;
        for (Figures.TopicFigures t : topics.values()) {
            partitions += t.partitions();
            bytes += t.sizeBytes();
        }
        int shareGroups = 0;
        int consumerGroups = 0;
        for (GroupSnapshot.Listed g : Figures.listed(p.groups())) {
            if (viewer.group(g.group())) {
                if (g.type().equals(GroupSnapshot.SHARE)) {
                    shareGroups++;
                } else {
                    consumerGroups++;
                }
            }
        }
        List<String> facts = new ArrayList<>(List.of("Node", String.valueOf(broker.nodeId()), "Cluster id",
                broker.clusterId(), "Mode", broker.gateway() ? "gateway" : "broker", "Up", Html.age(uptimeMs),
                "Topics", String.valueOf(topics.size()), "Partitions", String.valueOf(partitions), "Log size",
                Html.bytes(bytes), "Share groups", String.valueOf(shareGroups), "Consumer groups",
                String.valueOf(consumerGroups)));
        if (viewer.cluster()) {
            facts.addAll(List.of("Shards", String.valueOf(broker.shards())));
            broker.listeners().forEach((name, address) -> facts.addAll(List.of("Listener " + name, address)));
        }
        out.facts("broker", facts);
        out.heading(2, "Topics");
        out.startTable("topics", TOPICS);
        topics.forEach((name, t) -> out.startRow(name).cell("topic", name).number("partitions", t.partitions())
                .bytes("size", t.sizeBytes()).number("records", t.records()).endRow());
        out.endTable(topics.size(), TOPICS.size(), "No topics.");
        out.heading(2, "Requests");
        if (!viewer.cluster()) {
            out.note("muted", "Request rates need DESCRIBE on the cluster.");
            return out;
        }
        out.startTable("requests", RATES);
        rates.forEach((api, r) -> out.startRow(api).cell("api", api).rate("rate", r.perSecond())
                .number("total", r.total()).endRow());
        out.endTable(rates.size(), RATES.size(), "No requests yet.");
        return out;
    }
}
