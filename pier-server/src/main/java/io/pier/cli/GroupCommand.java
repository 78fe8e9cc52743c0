package io.pier.cli;

import static io.pier.cli.AdminCli.TIMEOUT_MS;
import static io.pier.cli.AdminCli.admin;
import static io.pier.cli.AdminCli.failed;
import static io.pier.cli.AdminCli.logEndOffsets;
import static io.pier.cli.AdminCli.sortedPartitions;
import static io.pier.cli.AdminCli.table;
import static io.pier.cli.AdminCli.value;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
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
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * {@code pier group --bootstrap-server HOST:PORT [--group G]}: every group of the cluster with its
 * type, state and member count; or one consumer group (classic or KIP-848) with its members, their
 * partitions, and per partition the committed offset, log end offset and lag. A share group is
 * shown by {@link ShareGroupCommand}, so {@code pier group --group G} answers for any group id.
 *
 * <p>Only wire APIs (Admin: ListGroups, DescribeGroups or ConsumerGroupDescribe, ShareGroupDescribe,
 * OffsetFetch, ListOffsets), so it works against any broker, Kafka included.
 */
final class GroupCommand {
    private GroupCommand() {}

    static int run(String[] args, PrintStream out, PrintStream err) {
        String bootstrap = null;
        String group = null;
        List<String> shareOptions = new ArrayList<>();
        try {
            for (int i = 1; i < args.length; i++) {
                switch (args[i]) {
                    case "--bootstrap-server" -> bootstrap = value(args, ++i);
                    case "--group" -> group = value(args, ++i);
                    case "--metrics-url" -> shareOptions.addAll(List.of(args[i], value(args, ++i)));
                    case "--no-metrics" -> shareOptions.add(args[i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bootstrap == null) {
                throw new IllegalArgumentException("--bootstrap-server is required");
            }
            if (group == null && !shareOptions.isEmpty()) {
                throw new IllegalArgumentException(
                        shareOptions.get(0) + " needs --group: it is for one share group's view");
            }
            if (group != null && group.isEmpty()) {
                throw new IllegalArgumentException("--group needs a group id, got an empty one");
            }
        } catch (IllegalArgumentException e) {
            err.println("pier: " + e.getMessage());
            usage(err);
            return 2;
        }
        return run(bootstrap, group, shareOptions, out, err);
    }

    private static int run(String bootstrap, String group, List<String> shareOptions, PrintStream out,
            PrintStream err) {
        try (Admin admin = admin(bootstrap)) {
            if (group == null) {
                list(admin, out);
                return 0;
            }
            Optional<GroupListing> listing = listGroups(admin).stream()
                    .filter(g -> g.groupId().equals(group)).findFirst();
            if (listing.flatMap(GroupListing::type).orElse(GroupType.UNKNOWN) == GroupType.SHARE) {
                List<String> share = new ArrayList<>(List.of("share-group", "--bootstrap-server", bootstrap,
                        "--group", group));
                share.addAll(shareOptions);
                return ShareGroupCommand.run(share.toArray(String[]::new), out, err);
            }
            // Not listed is not proof of absence (a broker may leave out a group that only has committed
            // offsets): the describe decides, and a Dead state or GROUP_ID_NOT_FOUND means no such group.
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (d.groupState() == GroupState.DEAD) {
                return noSuchGroup(err, group, bootstrap);
            }
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            describe(admin, out, d, committed);
            return 0;
        } catch (ExecutionException | TimeoutException | InterruptedException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return noSuchGroup(err, group, bootstrap);
            }
            return failed(err, group == null ? "list groups" : "describe group " + group, bootstrap, e);
        }
    }

    private static int noSuchGroup(PrintStream err, String group, String bootstrap) {
        err.println("pier: group " + group + " does not exist on " + bootstrap);
        return 1;
    }

    private static List<GroupListing> listGroups(Admin admin)
            throws InterruptedException, ExecutionException, TimeoutException {
        // No type filter: every group, of whatever type; a broker older than ListGroups v5 answers without
        // types rather than refusing the filter.
        List<GroupListing> groups = new ArrayList<>(admin.listGroups().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        groups.sort(Comparator.comparing(GroupListing::groupId));
        return groups;
    }

    /** One line per group; member counts come from describing them, and show "-" where that failed. */
    private static void list(Admin admin, PrintStream out)
            throws InterruptedException, ExecutionException, TimeoutException {
        List<GroupListing> groups = listGroups(admin);
        if (groups.isEmpty()) {
            out.println("No groups.");
            return;
        }
        List<String> consumerIds = new ArrayList<>();
        List<String> shareIds = new ArrayList<>();
        for (GroupListing g : groups) {
            switch (g.type().orElse(GroupType.UNKNOWN)) {
                case SHARE -> shareIds.add(g.groupId());
                // A classic group of another protocol type (Connect, say) is not a consumer group: no count.
                case CLASSIC -> {
                    if (g.isSimpleConsumerGroup() || g.protocol().equals("consumer")) {
                        consumerIds.add(g.groupId());
                    }
                }
                case CONSUMER -> consumerIds.add(g.groupId());
                default -> {
                    // streams or unknown: listed without a member count
                }
            }
        }
        Map<String, Integer> members = new HashMap<>();
        if (!consumerIds.isEmpty()) {
            admin.describeConsumerGroups(consumerIds).describedGroups()
                    .forEach((id, f) -> memberCount(f, ConsumerGroupDescription::members).ifPresent(n -> members.put(id, n)));
        }
        if (!shareIds.isEmpty()) {
            admin.describeShareGroups(shareIds).describedGroups()
                    .forEach((id, f) -> memberCount(f, ShareGroupDescription::members).ifPresent(n -> members.put(id, n)));
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"GROUP", "TYPE", "STATE", "MEMBERS"});
        for (GroupListing g : groups) {
            rows.add(new String[] {g.groupId(), g.type().map(GroupCommand::lower).orElse("-"),
                g.groupState().map(GroupState::toString).orElse("-"),
                members.containsKey(g.groupId()) ? String.valueOf(members.get(g.groupId())) : "-"});
        }
        table(out, rows);
    }

    private static <D> Optional<Integer> memberCount(KafkaFuture<D> f, Function<D, Collection<?>> members) {
        try {
            return Optional.of(members.apply(f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS)).size());
        } catch (ExecutionException | TimeoutException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private static void describe(Admin admin, PrintStream out, ConsumerGroupDescription d,
            Map<TopicPartition, OffsetAndMetadata> committed)
            throws InterruptedException, ExecutionException, TimeoutException {
        TreeSet<TopicPartition> partitions = sortedPartitions();
        committed.forEach((tp, o) -> {
            if (o != null) {
                partitions.add(tp);
            }
        });
        Map<TopicPartition, MemberDescription> owner = new HashMap<>();
        List<MemberDescription> members = new ArrayList<>(d.members());
        members.sort(Comparator.comparing(MemberDescription::consumerId));
        for (MemberDescription m : members) {
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                partitions.add(tp);
                owner.put(tp, m);
            }
        }
        Map<TopicPartition, Long> logEnd = logEndOffsets(admin, partitions);
        String assignor = d.partitionAssignor() == null || d.partitionAssignor().isEmpty() ? "-" : d.partitionAssignor();
        out.printf("Consumer group %s: state %s, protocol %s, assignor %s, %d member(s)%n", d.groupId(),
                d.groupState(), lower(d.type()), assignor, members.size());
        out.println();
        List<String[]> memberRows = new ArrayList<>();
        memberRows.add(new String[] {"MEMBER", "CLIENT-ID", "HOST", "PARTITIONS"});
        for (MemberDescription m : members) {
            TreeSet<TopicPartition> assigned = sortedPartitions();
            assigned.addAll(m.assignment().topicPartitions());
            memberRows.add(new String[] {m.consumerId(), m.clientId(), m.host(), assigned.isEmpty() ? "-"
                    : assigned.stream().map(TopicPartition::toString).collect(Collectors.joining(","))});
        }
        table(out, memberRows);
        out.println();
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"TOPIC", "PARTITION", "COMMITTED-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER"});
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata c = committed.get(tp);
            Long end = logEnd.get(tp);
            MemberDescription m = owner.get(tp);
            rows.add(new String[] {tp.topic(), String.valueOf(tp.partition()),
                c == null ? "-" : String.valueOf(c.offset()), end == null ? "-" : String.valueOf(end),
                // Like kafka-consumer-groups: no lag without a committed offset to measure it from.
                c == null || end == null ? "-" : String.valueOf(end - c.offset()),
                m == null ? "-" : m.consumerId()});
        }
        table(out, rows);
    }

    /** "classic", "consumer", "share": the names group.protocol and the Kafka tools use. */
    private static String lower(GroupType t) {
        return t.toString().toLowerCase(Locale.ROOT);
    }

    static void usage(PrintStream s) {
        s.println("usage: pier group --bootstrap-server HOST:PORT [--group GROUP [--metrics-url URL | --no-metrics]]");
        s.println("  Without --group: every group with its type (classic, consumer, share), state and member count.");
        s.println("  With --group: a consumer group's state, protocol, assignor, members with their partitions,");
        s.println("  and per partition the committed offset, log end offset and lag; a share group as");
        s.println("  pier share-group shows it (--metrics-url and --no-metrics are passed on to it).");
    }
}
