package io.pier.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.pier.metrics.GroupSnapshot;
import io.pier.metrics.PierMetrics;
import io.pier.metrics.SharePartitionSnapshot;
import io.pier.security.acl.Authorizer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers the console's paths on the metrics port, on the HTTP server's threads. Read-only: GET
 * and HEAD, anything else 405. Each page reads the published snapshots once, filters them with the
 * authorizer for the console's principal, and renders them; only a group page asks the group's
 * shard for its members, through its command queue, waiting at most {@link #MEMBERS_TIMEOUT_MS}.
 */
final class ConsoleHandler implements HttpHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ConsoleHandler.class);
    static final long MEMBERS_TIMEOUT_MS = 2_000;
    private static final String HTML = "text/html; charset=utf-8";
    /** Everything from the broker itself; no inline script, no other origin. */
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
            + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private record Response(int status, String contentType, byte[] body) {
        static Response html(int status, String page) {
            return new Response(status, HTML, page.getBytes(StandardCharsets.UTF_8));
        }
    }

    private final PierMetrics metrics;
    private final ConsoleSettings settings;
    private final ConsoleSources sources;
    private final Authorizer authorizer;
    private final History history;
    private final Sampler sampler;
    private final LongSupplier wallMs;
    private final long startedMs;
    private final byte[] script = resource("console.js");
    private final byte[] stylesheet = resource("console.css");
    private final byte[] icon = resource("favicon.svg");

    ConsoleHandler(PierMetrics metrics, ConsoleSettings settings, ConsoleSources sources, Authorizer authorizer,
            History history, Sampler sampler, LongSupplier wallMs) {
        this.metrics = metrics;
        this.settings = settings;
        this.sources = sources;
        this.authorizer = authorizer;
        this.history = history;
        this.sampler = sampler;
        this.wallMs = wallMs;
        this.startedMs = wallMs.getAsLong();
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            boolean head = method.equals("HEAD");
            if (!head && !method.equals("GET")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                send(exchange, new Response(405, "text/plain; charset=utf-8",
                        "The console is read-only: GET and HEAD only.\n".getBytes(StandardCharsets.UTF_8)), false);
                return;
            }
            Response response;
            try {
                response = answer(exchange);
            } catch (RuntimeException e) {
                LOG.warn("The console failed to render {}", exchange.getRequestURI().getRawPath(), e);
                response = Response.html(500, Layout.page("Error", Layout.Section.NONE, principal(), 0,
                        new Html().note("muted", "The page could not be rendered; the broker log says why.")));
            }
            send(exchange, response, head);
        }
    }

    private Response answer(HttpExchange exchange) {
        String path = exchange.getRequestURI().getRawPath();
        Viewer viewer = Viewer.of(authorizer, settings.principal(), host(exchange));
        return switch (path) {
            case "/", "/index.html" -> page("Overview", Layout.Section.OVERVIEW, OverviewPage.render(
                    Published.of(metrics), viewer, sources.broker(), sampler.requestRates(),
                    wallMs.getAsLong() - startedMs));
            case ShareGroupsPage.PATH -> page("Share groups", Layout.Section.SHARE_GROUPS,
                    ShareGroupsPage.render(Published.of(metrics), viewer, sources.broker().gateway(),
                    sources::coordinatorElsewhere));
            case ConsumerGroupsPage.PATH -> page("Consumer groups", Layout.Section.CONSUMER_GROUPS,
                    ConsumerGroupsPage.render(Published.of(metrics), viewer));
            case ShareGroupPage.PATH -> shareGroup(id(exchange), viewer);
            case ConsumerGroupPage.PATH -> consumerGroup(id(exchange), viewer);
            case "/console.js" -> new Response(200, "text/javascript; charset=utf-8", script);
            case "/console.css" -> new Response(200, "text/css; charset=utf-8", stylesheet);
            case "/favicon.svg", "/favicon.ico" -> new Response(200, "image/svg+xml", icon);
            default -> notFound("No page at " + URLDecoder.decode(path, StandardCharsets.UTF_8) + ".");
        };
    }

    private Response shareGroup(String group, Viewer viewer) {
        Published p = Published.of(metrics);
        boolean visible = group != null && viewer.group(group);
        GroupSnapshot.Listed listed = visible ? p.listed(group, true) : null;
        List<SharePartitionSnapshot> here = visible ? ShareGroupPage.partitionsOf(group, p, viewer) : List.of();
        // On a gateway of several nodes the group may be coordinated by another node, some of its
        // share-partitions served by others: this node shows what it serves and names the rest.
        Optional<ConsoleSources.NodeRef> coordinator = visible ? sources.coordinatorElsewhere(group) : Optional.empty();
        if (listed == null && here.isEmpty()) {
            if (coordinator.isPresent()) {
                return notFound("This node does not coordinate share group '" + group + "' nor serve any of its"
                        + " share-partitions: " + coordinator.get() + " coordinates it, if it exists.");
            }
            // The same answer for a group that is not there and one the principal may not see.
            return notFound("No share group " + (group == null ? "named" : "'" + group + "'") + " to show.");
        }
        Optional<List<ConsoleSources.Member>> members = coordinator.isPresent() ? Optional.empty()
                : await(sources.shareGroupMembers(group));
        ShareGroupPage.Model model = new ShareGroupPage.Model(group, listed == null ? "not known here" : listed.state(),
                sources.shareGroupSettings(group), members, here, sources.broker().gateway(), coordinator,
                servedElsewhere(members, here, viewer),
                history.samples(new History.Key(History.Metric.SHARE_LAG, group)),
                history.samples(new History.Key(History.Metric.SHARE_OLDEST_AGE_MS, group)));
        return page("Share group " + group, Layout.Section.SHARE_GROUPS, ShareGroupPage.render(model, viewer));
    }

    /** The assigned partitions, of those the viewer may see, whose share state another gateway node serves. */
    private Map<TopicPartition, ConsoleSources.NodeRef> servedElsewhere(Optional<List<ConsoleSources.Member>> members,
            List<SharePartitionSnapshot> here, Viewer viewer) {
        Map<TopicPartition, ConsoleSources.NodeRef> out = new TreeMap<>(
                Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        if (!sources.broker().gateway() || members.isEmpty()) {
            return out;
        }
        Set<TopicPartition> served = new HashSet<>();
        here.forEach(s -> served.add(new TopicPartition(s.topic(), s.partition())));
        for (ConsoleSources.Member m : members.get()) {
            for (TopicPartition tp : m.assigned()) {
                if (!served.contains(tp) && viewer.topics().test(tp.topic())) {
                    sources.servedElsewhere(tp.topic(), tp.partition()).ifPresent(n -> out.put(tp, n));
                }
            }
        }
        return out;
    }

    private Response consumerGroup(String group, Viewer viewer) {
        Published p = Published.of(metrics);
        GroupSnapshot.Listed listed = group == null ? null : p.listed(group, false);
        if (listed == null || !viewer.group(group)) {
            return notFound("No consumer group " + (group == null ? "named" : "'" + group + "'") + " to show.");
        }
        ConsumerGroupPage.Model model = new ConsumerGroupPage.Model(group, listed.type(), listed.state(),
                await(sources.consumerGroupMembers(group)), Figures.committed(p.groups(), p.logs()),
                history.samples(new History.Key(History.Metric.CONSUMER_LAG, group)));
        return page("Consumer group " + group, Layout.Section.CONSUMER_GROUPS, ConsumerGroupPage.render(model, viewer));
    }

    /** The members, an empty list if the group went away meanwhile, or nothing if its shard did not answer in time. */
    private static Optional<List<ConsoleSources.Member>> await(
            CompletableFuture<Optional<List<ConsoleSources.Member>>> members) {
        try {
            return Optional.of(members.get(MEMBERS_TIMEOUT_MS, TimeUnit.MILLISECONDS).orElse(List.of()));
        } catch (TimeoutException | ExecutionException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private Response page(String title, Layout.Section section, Html body) {
        return Response.html(200, Layout.page(title, section, principal(), settings.refreshMs(), body));
    }

    private Response notFound(String message) {
        return Response.html(404, Layout.page("Not found", Layout.Section.NONE, principal(), 0,
                new Html().note("muted", message)));
    }

    private String principal() {
        return settings.principal().toString();
    }

    /** The {@code id} query parameter, decoded; null if absent. */
    static String id(HttpExchange exchange) {
        String query = exchange.getRequestURI().getRawQuery();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            if (pair.startsWith("id=")) {
                try {
                    return URLDecoder.decode(pair.substring(3), StandardCharsets.UTF_8);
                } catch (IllegalArgumentException e) {
                    return null;
                }
            }
        }
        return null;
    }

    private static String host(HttpExchange exchange) {
        InetSocketAddress remote = exchange.getRemoteAddress();
        return remote == null || remote.getAddress() == null ? "" : remote.getAddress().getHostAddress();
    }

    private static void send(HttpExchange exchange, Response r, boolean head) throws IOException {
        var headers = exchange.getResponseHeaders();
        headers.set("Content-Type", r.contentType());
        headers.set("Cache-Control", "no-store");
        headers.set("X-Content-Type-Options", "nosniff");
        headers.set("Referrer-Policy", "no-referrer");
        headers.set("Content-Security-Policy", CSP);
        if (head) {
            exchange.sendResponseHeaders(r.status(), -1);
            return;
        }
        exchange.sendResponseHeaders(r.status(), r.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(r.body());
        }
    }

    private static byte[] resource(String name) {
        try (InputStream in = ConsoleHandler.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource io/pier/console/" + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
