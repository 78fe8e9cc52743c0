package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.ChildBroker;
import io.pier.it.faults.FaultyProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ShareFetchResponse;

/**
 * The nemesis soak's broker (reliability scenario S50): {@code pier start} in a child JVM that
 * advertises a {@link FaultyProxy}'s address on its client listener, so that every connection of
 * the load's clients, the oracle's checks included, goes through the proxy. Each cycle's fault is
 * one {@link Kind}, drawn from a deck of all of them shuffled with the soak's seed (a fresh deck
 * when one runs out), so any run of as many cycles as there are kinds has each at least once:
 * <ul>
 *   <li>SIGKILL, then a restart on the same data folder and port (S21);
 *   <li>SIGTERM, a clean shutdown, then the same restart (S20);
 *   <li>SIGSTOP for 1-8 s, then SIGCONT: no restart; longer than the clients' 5 s request
 *       timeout three times in seven, longer than the 1.5 s record lock most times (S24);
 *   <li>a burst of network faults at the proxy, then healed: every connection reset every
 *       100-400 ms (see below); a latency spike that makes every round trip outlast the record
 *       lock; a partition that holds every byte longer than the lock; or lost answers to one API
 *       (Produce, ShareFetch, ShareAcknowledge, OffsetCommit or EndTxn), each loss followed by a
 *       reset (S30, S31, S32);
 *   <li>a share consumer of the load cut off at the proxy (all its connections reset, and any new
 *       one at its first request) and closed without a word, as the kernel ends a killed consumer
 *       process's connections, and another started in its place (S13, hard; the consumers are
 *       threads of the test JVM, so this is as near to killing one as the load gets).
 * </ul>
 * Only the two faults that stop the broker tell the oracle of a crash: across a pause or a network
 * fault the broker keeps its locks, and every redelivery must be explained by what the consumers
 * were told (I11).
 *
 * <p>The proxy also reads every ShareFetch answer on its way, and notes the records handed out at
 * the delivery limit, whether or not the answer reaches its client. A hand-out lost on the way
 * still counts as a delivery (in Kafka 4.4 too: KAFKA-19972), so resets every few hundred
 * milliseconds can take a record through all its deliveries to the archive without the load ever
 * getting it; that wire evidence is what lets the oracle tell such a record from a lost one
 * ({@link #seenHandedOut}). For it to be complete, a reset (and a client's own close, and a cut)
 * reaches the broker 2 s after the client: RST to the client at once, the broker's side left open
 * and silent, read, then reset. With the broker told at once, a fetch it had parked on that
 * connection could acquire records for an answer that never left the broker, a delivery no one
 * sees: every time, until {@code ParkedShareFetchIT}'s finding was fixed; still in the moment the
 * connection closes, what such a fetch acquired then being given back with its delivery counted.
 */
final class NemesisBroker implements SoakBroker {
    /** A fault of one cycle. */
    enum Kind { KILL, TERM, PAUSE, RESETS, LATENCY, PARTITION, LOST_ANSWERS, CONSUMER }

    /** The APIs whose answers {@link Kind#LOST_ANSWERS} loses: the load sends each of them all the time. */
    private static final List<ApiKeys> LOSABLE = List.of(ApiKeys.PRODUCE, ApiKeys.SHARE_FETCH,
            ApiKeys.SHARE_ACKNOWLEDGE, ApiKeys.OFFSET_COMMIT, ApiKeys.END_TXN);
    /** The load's clients give up on a request after this long. */
    private static final long REQUEST_TIMEOUT_MS = 5_000;
    /** A clean shutdown takes this long at most. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    /** How long a burst of lost answers waits for the answers to lose. */
    private static final long LOSS_WINDOW_MS = 5_000;
    /**
     * How long the proxy keeps the broker's side of a reset connection open and reads it: past the
     * clients' 500 ms fetch wait, so that every fetch the broker had parked there is answered on
     * it, where the proxy sees what it handed out.
     */
    private static final long DRAIN_MS = 2_000;

    private final ChildBroker child;
    private final FaultyProxy proxy;
    private final String proxied;
    private final List<Kind> deck = new ArrayList<>();
    private final Map<Kind, Integer> ran = new EnumMap<>(Kind.class);
    private final Map<ApiKeys, Integer> answersLost = new EnumMap<>(ApiKeys.class);
    private long longestPauseMs;
    private int pausesPastRequestTimeout;
    /**
     * Per topic id and partition, the offsets the proxy saw the broker hand out at the delivery
     * limit or above, in ShareFetch answers it forwarded or lost: what explains a record the load
     * never got ({@link #seenHandedOut}).
     */
    private final Map<Uuid, Map<Integer, Set<Long>>> handedOutAtLimit = new ConcurrentHashMap<>();
    private final Map<String, Uuid> topicIds = new ConcurrentHashMap<>();

    NemesisBroker(Path dataDir, Path logDir) throws Exception {
        int proxyPort = ChildBroker.freeLoopbackPort();
        List<String> settings = new ArrayList<>(MixedLoadSoak.BROKER_SETTINGS);
        // ChildBroker puts its own port on the first listener; the proxy's port is what the
        // broker tells clients, so they reach it through the proxy after the bootstrap too.
        settings.add("listeners=PLAINTEXT://127.0.0.1:0");
        settings.add("advertised.listeners=PLAINTEXT://127.0.0.1:" + proxyPort);
        child = new ChildBroker(dataDir, logDir, settings.toArray(String[]::new));
        String direct = child.bootstrapServers();
        proxy = new FaultyProxy(proxyPort, Integer.parseInt(direct.substring(direct.lastIndexOf(':') + 1)));
        proxied = "127.0.0.1:" + proxyPort;
        proxy.watch(ApiKeys.SHARE_FETCH, this::noteHandOuts);
        // A client's own closes (after a request timed out, say) leave the broker's side open a
        // while too, so that a fetch it had parked there is answered where the proxy sees it.
        proxy.drainOnClientEnd(DRAIN_MS);
    }

    /** Notes the records a ShareFetch answer hands out at the delivery limit; runs on a proxy thread. */
    private void noteHandOuts(FaultyProxy.Exchange exchange) {
        ShareFetchResponseData answer = ((ShareFetchResponse) exchange.response()).data();
        for (ShareFetchResponseData.ShareFetchableTopicResponse topic : answer.responses()) {
            for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                for (ShareFetchResponseData.AcquiredRecords range : partition.acquiredRecords()) {
                    if (range.deliveryCount() < MixedLoadSoak.DELIVERY_LIMIT) {
                        continue;
                    }
                    Set<Long> offsets = handedOutAtLimit.computeIfAbsent(topic.topicId(), k -> new ConcurrentHashMap<>())
                            .computeIfAbsent(partition.partitionIndex(), k -> ConcurrentHashMap.newKeySet());
                    for (long o = range.firstOffset(); o <= range.lastOffset(); o++) {
                        offsets.add(o);
                    }
                }
            }
        }
    }

    /** Hand-outs are noted at the delivery limit only, so only it may be asked about. */
    @Override
    public boolean seenHandedOut(TopicPartition tp, long offset, int count) throws Exception {
        if (count != MixedLoadSoak.DELIVERY_LIMIT) {
            throw new IllegalArgumentException("hand-outs are noted at count " + MixedLoadSoak.DELIVERY_LIMIT + " only");
        }
        Uuid id = topicIds.get(tp.topic());
        if (id == null) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", proxied, "default.api.timeout.ms", "30000"))) {
                id = admin.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS)
                        .get(tp.topic()).topicId();
            }
            topicIds.put(tp.topic(), id);
        }
        return handedOutAtLimit.getOrDefault(id, Map.of()).getOrDefault(tp.partition(), Set.of()).contains(offset);
    }

    @Override
    public String bootstrapServers() {
        return proxied;
    }

    @Override
    public void start(int run) throws Exception {
        child.start(run);
    }

    @Override
    public void assertAlive() throws Exception {
        child.assertAlive();
    }

    @Override
    public void crash(Random random) throws Exception {
        assertThat(child.kill()).as("broker died of SIGKILL").isTrue();
    }

    @Override
    public void fault(int cycle, Random random, Load load) throws Exception {
        if (deck.isEmpty()) {
            deck.addAll(List.of(Kind.values()));
            Collections.shuffle(deck, random);
        }
        Kind kind = deck.remove(deck.size() - 1);
        ran.merge(kind, 1, Integer::sum);
        String what = switch (kind) {
            case KILL -> {
                load.brokerGoingDown();
                crash(random);
                child.start(cycle);
                yield "SIGKILL, restarted";
            }
            case TERM -> {
                load.brokerGoingDown();
                int status = child.terminate(STOP_TIMEOUT);
                child.start(cycle);
                yield "SIGTERM (exit status " + status + "), restarted";
            }
            case PAUSE -> pause(1_000 + random.nextInt(7_001));
            // Its own dice: how many it throws depends on timing, and the seed must replay the faults.
            case RESETS -> resets(new Random(random.nextLong()), 2_000 + random.nextInt(3_001));
            case LATENCY -> latencySpike(3_000 + random.nextInt(3_001));
            case PARTITION -> partition(MixedLoadSoak.LOCK_MS + 500 + random.nextInt(6_001));
            case LOST_ANSWERS -> loseAnswers(LOSABLE.get(random.nextInt(LOSABLE.size())), 1 + random.nextInt(5));
            case CONSUMER -> replaceConsumer(random, load);
        };
        // When it ended, to line it up with the broker's logs and its share-state log.
        System.out.printf("nemesis cycle %d (%s): %s%n", cycle, LocalTime.now(), what);
    }

    private String pause(long ms) throws Exception {
        child.pause();
        Thread.sleep(ms);
        child.resume();
        longestPauseMs = Math.max(longestPauseMs, ms);
        if (ms > REQUEST_TIMEOUT_MS) {
            pausesPastRequestTimeout++;
        }
        return "SIGSTOP for " + ms + " ms, then SIGCONT";
    }

    private String resets(Random random, long ms) throws InterruptedException {
        int before = proxy.resets();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < end) {
            Thread.sleep(100 + random.nextInt(301));
            proxy.resetClients(DRAIN_MS);
        }
        int reset = proxy.resets() - before;
        // The load keeps connections open all the time: a burst that reset none hit nothing.
        assertThat(reset).as("connections reset in %d ms", ms).isPositive();
        return "connections reset every 100-400 ms for " + ms + " ms: " + reset + " resets";
    }

    private String latencySpike(long ms) throws InterruptedException {
        // Each way at least half the lock: a record's acknowledgement reaches the broker after
        // its lock ran out, while a round trip stays inside the request timeout.
        long min = MixedLoadSoak.LOCK_MS / 2 + 50;
        long max = min + 400;
        proxy.latency(min, max);
        Thread.sleep(ms);
        proxy.latency(0, 0);
        return "latency " + min + "-" + max + " ms each way for " + ms + " ms";
    }

    private String partition(long ms) throws InterruptedException {
        proxy.partition();
        Thread.sleep(ms);
        proxy.heal();
        return "partition (every byte held) for " + ms + " ms, then healed";
    }

    private String loseAnswers(ApiKeys api, int count) throws InterruptedException {
        int before = proxy.droppedResponses();
        proxy.dropResponses(api, count, request -> true, FaultyProxy.AfterDrop.RESET, exchange -> {
            if (api == ApiKeys.SHARE_FETCH) {
                noteHandOuts(exchange);
            }
        });
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOSS_WINDOW_MS);
        while (proxy.droppedResponses() - before < count && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        proxy.stopDropping();
        int lost = proxy.droppedResponses() - before;
        answersLost.merge(api, lost, Integer::sum);
        return "answers to " + lost + " of " + count + " " + api + " requests lost, each connection reset after";
    }

    private String replaceConsumer(Random random, Load load) throws Exception {
        List<String> consumers = load.shareConsumers();
        String victim = consumers.get(random.nextInt(consumers.size()));
        int reset = proxy.cut(victim, DRAIN_MS);
        load.replaceShareConsumer(victim);
        return "share consumer " + victim + " cut off (" + reset + " connections reset) and closed without a word,"
                + " another started";
    }

    /** How many times each kind of fault ran. */
    Map<Kind, Integer> faultsRun() {
        return Map.copyOf(ran);
    }

    @Override
    public void close() throws Exception {
        int atLimit = handedOutAtLimit.values().stream().flatMap(m -> m.values().stream()).mapToInt(Set::size).sum();
        System.out.printf("NemesisSoakIT: faults run %s; %d connections reset by bursts and cuts; answers lost %s;"
                + " longest pause %d ms, %d pauses past the %d ms request timeout; %d records seen handed out at"
                + " the delivery limit%n", ran, proxy.resets(), answersLost, longestPauseMs, pausesPastRequestTimeout,
                REQUEST_TIMEOUT_MS, atLimit);
        try {
            proxy.close();
        } finally {
            child.close();
        }
    }
}
