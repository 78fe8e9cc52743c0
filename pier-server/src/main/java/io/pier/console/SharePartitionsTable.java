package io.pier.console;

import io.pier.metrics.SharePartitionSnapshot;
import java.util.ArrayList;
import java.util.List;

/** The share-partitions of a share group, one row each, from the snapshots their shards publish. */
final class SharePartitionsTable {
    private SharePartitionsTable() {}

    static void render(Html out, List<SharePartitionSnapshot> partitions, boolean orderedByKey) {
        List<Html.Column> columns = new ArrayList<>(List.of(Html.Column.text("Topic"), Html.Column.num("Partition"),
                Html.Column.num("Start offset"), Html.Column.num("End offset"), Html.Column.num("Lag"),
                Html.Column.num("Available"), Html.Column.num("Acquired"), Html.Column.num("Acknowledged"),
                Html.Column.num("Archiving"), Html.Column.num("Archived"), Html.Column.num("In backoff"),
                Html.Column.num("Oldest unacknowledged")));
        if (orderedByKey) {
            columns.add(Html.Column.num("Blocked keys"));
            columns.add(Html.Column.num("Oldest blocked"));
        }
        columns.add(Html.Column.num("Dead letters"));
        out.heading(2, "Share-partitions");
        out.startTable("share-partitions", columns);
        for (SharePartitionSnapshot s : partitions) {
            out.startRow(s.topic() + "-" + s.partition()).cell("topic", s.topic()).number("partition", s.partition())
                    .number("start-offset", s.startOffset()).number("end-offset", s.endOffset())
                    .number("lag", s.lag()).number("available", s.available()).number("acquired", s.acquired())
                    .number("acknowledged", s.acknowledged()).number("archiving", s.archiving())
                    .number("archived", s.archived()).number("backoff", s.inBackoff())
                    .ageMs("oldest-age", s.oldestUnacknowledgedAgeMs());
            if (orderedByKey) {
                out.number("blocked-keys", s.blockedKeys()).ageMs("oldest-blocked-age", s.oldestBlockedAgeMs());
            }
            out.number("dead-letters", s.counts().deadLetters()).endRow();
        }
        out.endTable(partitions.size(), columns.size(), "No share-partitions loaded yet: they appear once the"
                + " group's members fetch from them.");
    }
}
