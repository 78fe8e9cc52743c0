package io.pier.console;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;

/** {@code /consumer-group?id=G}: one consumer group: its lag plot, members, committed offsets and lag. */
final class ConsumerGroupPage {
    static final String PATH = "/consumer-group";
    private static final List<Html.Column> MEMBERS = List.of(Html.Column.text("Member"), Html.Column.text("Client"),
            Html.Column.text("Host"), Html.Column.num("Partitions"), Html.Column.text("Assigned"));
    private static final List<Html.Column> OFFSETS = List.of(Html.Column.text("Topic"), Html.Column.num("Partition"),
            Html.Column.num("Committed offset"), Html.Column.num("High watermark"), Html.Column.num("Lag"));

    /** What the page shows; {@code members} empty when the coordinator did not answer in time. */
    record Model(String group, String protocol, String state, Optional<List<ConsoleSources.Member>> members,
            List<Figures.CommittedRow> committed, RingBuffer.Samples lag) {}

    private ConsumerGroupPage() {}

    static Html render(Model m, Viewer viewer) {
        Predicate<String> topics = viewer.topics();
        List<Figures.CommittedRow> committed = new ArrayList<>();
        long lag = 0;
        for (Figures.CommittedRow c : m.committed()) {
            if (c.group().equals(m.group()) && topics.test(c.partition().topic())) {
                committed.add(c);
                lag += c.lag();
            }
        }
        committed.sort(Comparator.comparing((Figures.CommittedRow c) -> c.partition().topic())
                .thenComparingInt(c -> c.partition().partition()));
        Html out = new Html();
        out.facts("group-facts", List.of("Protocol", m.protocol(), "State", m.state(), "Lag", String.valueOf(lag),
                "Members", m.members().map(l -> String.valueOf(l.size())).orElse("?")));
        out.raw("<div class=\"plots\">");
        Plot.draw(out, "plot-lag", "Lag (records)", m.lag(), Plot.Unit.COUNT);
        out.raw("</div>\n");
        out.heading(2, "Members");
        if (m.members().isEmpty()) {
            out.note("muted", "The group's coordinator did not answer in time; reload to try again.");
        } else {
            out.startTable("members", MEMBERS);
            for (ConsoleSources.Member member : m.members().get()) {
                List<TopicPartition> assigned = new ArrayList<>(member.assigned());
                assigned.removeIf(tp -> !topics.test(tp.topic()));
                assigned.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
                out.startRow(member.memberId()).cell("member", member.memberId()).cell("client", member.clientId())
                        .cell("host", member.clientHost()).number("partitions", assigned.size())
                        .cell("assigned", ShareGroupPage.join(assigned)).endRow();
            }
            out.endTable(m.members().get().size(), MEMBERS.size(), "No members.");
        }
        out.heading(2, "Committed offsets");
        out.startTable("offsets", OFFSETS);
        for (Figures.CommittedRow c : committed) {
            out.startRow(c.partition().topic() + "-" + c.partition().partition()).cell("topic", c.partition().topic())
                    .number("partition", c.partition().partition()).number("committed", c.committed())
                    .number("high-watermark", c.highWatermark()).number("lag", c.lag()).endRow();
        }
        out.endTable(committed.size(), OFFSETS.size(), "No committed offsets.");
        return out;
    }
}
