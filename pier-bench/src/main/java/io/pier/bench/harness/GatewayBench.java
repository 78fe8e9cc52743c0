package io.pier.bench.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;

/**
 * Pier gateway nodes (issue 16) against Kafka 4.4's own share groups, on one Apache Kafka broker
 * on this machine: the same share-consumption workload through Kafka's native share group, through
 * one gateway node over that Kafka and through three, side by side in one run; then the failover
 * time of a killed gateway node. Started by {@code bench/gateway-vs-kafka.sh}.
 *
 * <p>The Kafka broker serves every row: its share groups for the native row, and as the gateways'
 * upstream (records, share state, the gateway group) for the others. A gateway row's cost is the
 * gateway processes' CPU on top of the broker's, so both are read over the row's window.
 */
public final class GatewayBench {
    static final String KAFKA = "kafka";
    static final String GW1 = "gw1";
    static final String GW3 = "gw3";
    static final List<String> ALL_ROWS = List.of(KAFKA, GW1, GW3);
    /** The topic every unmeasured warm-up run reads (each in a new share group). */
    static final String WARM_TOPIC = "warm-src";

    /**
     * Counts and durations of one run; {@code --quick} shrinks them.
     *
     * @param consumers the consumer counts of the throughput rows, each a row of its own
     * @param sessionTimeouts the {@code pier.gateway.session.timeout.ms} values the failover runs with
     * @param kills kills per session timeout
     */
    record Params(int rounds, int records, int warmRecords, int partitions, List<Integer> consumers, Duration cap,
            int kills, List<Integer> sessionTimeouts, int failoverRate, int failoverConsumers, boolean quick) {
        static Params fullRun() {
            // 1,000,000 records per run, as the share rows of pier-vs-kafka.sh: shorter runs measure the
            // consumers' ramp-up more than the steady state.
            return new Params(3, 1_000_000, 500_000, 12, List.of(4, 16), Duration.ofSeconds(180), 5,
                    List.of(10_000, 3_000), 2_000, 4, false);
        }

        static Params quickRun() {
            return new Params(1, 100_000, 100_000, 12, List.of(16), Duration.ofSeconds(90), 2,
                    List.of(10_000, 3_000), 1_000, 4, true);
        }
    }

    /** One run's kills at one session timeout. */
    record FailoverRun(int sessionTimeoutMs, List<Failover.Kill> kills, String counts, String note) {}

    private final Params p;
    private final String pierClasspath;
    private final Path kafkaLib;
    private final Path work;
    private final List<String> jvmFlags;
    List<String> rows = ALL_ROWS;
    boolean throughput = true;
    boolean failover = true;
    private final Results results = new Results();
    /** Per round and gateway row, how the measured topics' partitions were led, for the page. */
    private final Map<String, String> splits = new LinkedHashMap<>();
    /** Warm-up reads each gateway deployment took ({@link #warmUp}). */
    private final Map<String, Integer> warmReads = new LinkedHashMap<>();
    /** A deployment is warm once its JIT compilers take at most this share of its CPU in a warm-up read. */
    static final double WARM_JIT_SHARE = 0.10;
    static final int MAX_WARM_READS = 6;
    private final List<FailoverRun> failovers = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    /** Per measured run, where its work went: the gateways' request times, the share state written upstream. */
    private final List<String> diagnostics = new ArrayList<>();
    /** The Kafka broker's admin client, for the share-state topics' sizes around each run. */
    private Admin kafkaAdmin;
    private KafkaBroker kafka;
    private String kafkaNote = "";

    GatewayBench(Params p, String pierClasspath, Path kafkaLib, Path work, List<String> jvmFlags) {
        this.p = p;
        this.pierClasspath = pierClasspath;
        this.kafkaLib = kafkaLib;
        this.work = work;
        this.jvmFlags = jvmFlags;
    }

    public static void main(String[] args) throws Exception {
        boolean quick = Arrays.asList(args).contains("--quick");
        Params p = quick ? Params.quickRun() : Params.fullRun();
        String pierCp = null;
        Path kafkaLib = null;
        Path work = Path.of("pier-bench/target/bench-run-gateway");
        Path out = null;
        String heap = "1g";
        String command = "bench/gateway-vs-kafka.sh";
        List<String> rows = ALL_ROWS;
        boolean throughput = true;
        boolean failover = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> { }
                case "--rounds" -> p = with(p, "rounds", Integer.parseInt(args[++i]));
                case "--records" -> p = with(p, "records", Integer.parseInt(args[++i]));
                case "--warm-records" -> p = with(p, "warmRecords", Integer.parseInt(args[++i]));
                case "--partitions" -> p = with(p, "partitions", Integer.parseInt(args[++i]));
                case "--kills" -> p = with(p, "kills", Integer.parseInt(args[++i]));
                case "--failover-rate" -> p = with(p, "failoverRate", Integer.parseInt(args[++i]));
                case "--failover-consumers" -> p = with(p, "failoverConsumers", Integer.parseInt(args[++i]));
                case "--consumers" -> p = new Params(p.rounds, p.records, p.warmRecords, p.partitions, ints(args[++i]),
                        p.cap, p.kills, p.sessionTimeouts, p.failoverRate, p.failoverConsumers, p.quick);
                case "--session-timeouts" -> p = new Params(p.rounds, p.records, p.warmRecords, p.partitions,
                        p.consumers, p.cap, p.kills, ints(args[++i]), p.failoverRate, p.failoverConsumers, p.quick);
                case "--rows" -> rows = List.of(args[++i].split(","));
                case "--no-failover" -> failover = false;
                case "--only-failover" -> throughput = false;
                case "--pier-cp" -> pierCp = args[++i];
                case "--kafka-lib" -> kafkaLib = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--heap" -> heap = args[++i];
                case "--command" -> command = args[++i];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (pierCp == null || kafkaLib == null) {
            throw new IllegalArgumentException("--pier-cp and --kafka-lib are required");
        }
        for (String r : rows) {
            if (!ALL_ROWS.contains(r)) {
                throw new IllegalArgumentException("unknown row " + r + "; known: " + String.join(",", ALL_ROWS));
            }
        }
        if (out == null) {
            out = work.resolve(quick ? "gateway-vs-kafka-quick.md" : "gateway-vs-kafka.md");
        }
        // The flags of pier-vs-kafka.sh's brokers, for every JVM here (Kafka and each gateway node).
        List<String> flags = List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                "-Djava.awt.headless=true");
        long t0 = System.nanoTime();
        GatewayBench bench = new GatewayBench(p, pierCp, kafkaLib, work, flags);
        bench.rows = rows;
        bench.throughput = throughput;
        bench.failover = failover;
        bench.run();
        long seconds = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        String md = bench.markdown(command, seconds, flags);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, md);
        System.out.println(md);
        System.out.println("[bench] wrote " + out + " after " + seconds + " s");
    }

    private static List<Integer> ints(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).map(Integer::parseInt).toList();
    }

    private static Params with(Params p, String field, int v) {
        return new Params(field.equals("rounds") ? v : p.rounds, field.equals("records") ? v : p.records,
                field.equals("warmRecords") ? v : p.warmRecords, field.equals("partitions") ? v : p.partitions,
                p.consumers, p.cap, field.equals("kills") ? v : p.kills, p.sessionTimeouts,
                field.equals("failoverRate") ? v : p.failoverRate,
                field.equals("failoverConsumers") ? v : p.failoverConsumers, p.quick);
    }

    void run() throws Exception {
        List<BrokerProcess> running = Collections.synchronizedList(new ArrayList<>());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (running) {
                running.forEach(b -> {
                    if (b.process != null) {
                        b.process.destroyForcibly();
                    }
                });
            }
        }, "stop-brokers"));
        SideBySide.deleteTree(work);
        Files.createDirectories(work);
        kafka = new KafkaBroker(KAFKA, jvmFlags, work.resolve("kafka"), kafkaLib, false);
        int lowest = failover ? Collections.min(p.sessionTimeouts) : Integer.MAX_VALUE;
        // Kafka refuses a classic-group member whose session timeout is under group.min.session.timeout.ms
        // (6000 by default): the gateway group's JoinGroup then fails. Lowered only as far as a run needs.
        if (lowest < 6_000) {
            kafka.extraSettings = Map.of("group.min.session.timeout.ms", Integer.toString(lowest));
            kafkaNote = "`group.min.session.timeout.ms=" + lowest + "` (default 6000; a lower "
                    + "`pier.gateway.session.timeout.ms` is refused by the upstream otherwise)";
        }
        running.add(kafka);
        try {
            long ms = kafka.start(List.of());
            log("kafka answered after " + ms + " ms at " + kafka.bootstrap());
            if (throughput) {
                throughputRows();
            }
            if (failover) {
                for (int timeout : p.sessionTimeouts) {
                    failover(timeout);
                }
            }
        } finally {
            kafka.close();
        }
    }

    private void throughputRows() throws Exception {
        int maxConsumers = Collections.max(p.consumers);
        Properties props = new Properties();
        props.put("bootstrap.servers", kafka.bootstrap());
        props.put("client.id", "bench-kafka-admin");
        try (Admin ka = Admin.create(props); Workloads kw = new Workloads(kafka.bootstrap(), p.cap, kafka::cpuNanos)) {
            kafkaAdmin = ka;
            kw.createTopic(WARM_TOPIC, p.partitions);
            long warm = kw.produce(WARM_TOPIC, p.partitions, p.warmRecords, 100).records();
            // Unmeasured: the client JVM's and Kafka's warm-up (class loading, JIT) before any row.
            log("warm-up (unmeasured): Kafka share group, " + maxConsumers + " consumers, " + warm + " records");
            var unused = kw.share(WARM_TOPIC, maxConsumers, true, (int) warm, 0);
            for (int r = 0; r < p.rounds; r++) {
                List<String> order = new ArrayList<>(rows);
                Collections.rotate(order, -r);
                for (String row : order) {
                    log("round " + (r + 1) + "/" + p.rounds + ": " + row);
                    Map<Integer, String> topics = new LinkedHashMap<>();
                    Map<Integer, Long> filled = new LinkedHashMap<>();
                    for (int c : p.consumers) {
                        String topic = "src-" + row + "-r" + (r + 1) + "-" + c + "c";
                        kw.createTopic(topic, p.partitions);
                        topics.put(c, topic);
                        filled.put(c, kw.produce(topic, p.partitions, p.records, 100).records());
                    }
                    try {
                        if (row.equals(KAFKA)) {
                            for (int c : p.consumers) {
                                Edges edges = new Edges(kafka::cpuNanos, null, KAFKA_STATE_TOPIC);
                                Workloads.ConsumeRun run;
                                try (Workloads w = new Workloads(kafka.bootstrap(), p.cap, edges)) {
                                    run = measure(row, c, () -> w.share(topics.get(c), c, true,
                                            filled.get(c).intValue(), 0), edges);
                                }
                                diagnose(row + "-r" + (r + 1) + " " + c + " consumers", run, KAFKA_STATE_TOPIC,
                                        edges.snapshots());
                            }
                        } else {
                            gatewayRow(row, r, topics, filled, warm);
                        }
                    } finally {
                        deleteTopics(topics.values());
                    }
                }
            }
        }
    }

    private void gatewayRow(String row, int round, Map<Integer, String> topics, Map<Integer, Long> filled, long warm)
            throws Exception {
        int nodes = row.equals(GW1) ? 1 : 3;
        String name = row + "-r" + (round + 1);
        GatewayDeployment d;
        try {
            d = GatewayDeployment.start(name, nodes, work.resolve(name), pierFlags(), pierClasspath,
                    work.resolve("pier-cds.jsa"), kafka.bootstrap(), 0, WARM_TOPIC);
        } catch (Exception e) {
            problem(name + ": the gateway nodes did not start or settle: " + SideBySide.rootCause(e));
            for (int c : p.consumers) {
                unavailable(row, c);
            }
            return;
        }
        try (d; Admin admin = d.admin();
                Workloads gw = new Workloads(d.bootstrap(), p.cap, d::cpuNanos, kafka::cpuNanos, Map.of(), "")) {
            // gw runs the warm-up; each measured run gets a client of its own, whose window edges take snapshots.
            List<String> split = new ArrayList<>();
            for (String topic : topics.values()) {
                split.add(GatewayDeployment.split(GatewayDeployment.leaders(admin, topic)));
            }
            splits.put(name, String.join("; ", new java.util.LinkedHashSet<>(split)));
            log("  " + name + " leads the measured topics' partitions as: " + splits.get(name));
            warmUp(name, d, gw, warm);
            String stateTopic = "__pier_share_state_" + name;
            for (int c : p.consumers) {
                Edges edges = new Edges(d::cpuNanos, d, stateTopic);
                Workloads.ConsumeRun run;
                MirrorLead lead = new MirrorLead(d, topics.get(c), filled.get(c));
                try (lead; Workloads w = new Workloads(d.bootstrap(), p.cap, edges, kafka::cpuNanos, Map.of(), "")) {
                    run = measure(row, c, () -> w.share(topics.get(c), c, true, filled.get(c).intValue(), 0),
                            edges);
                }
                diagnose(name + " " + c + " consumers", run, stateTopic, edges.snapshots());
                if (run != null) {
                    String mirror = lead.summary();
                    diagnostics.set(diagnostics.size() - 1, diagnostics.get(diagnostics.size() - 1) + "; " + mirror);
                    log("    " + mirror);
                }
            }
        }
    }

    /**
     * Unmeasured: the gateway JVMs' JIT warm-up, on a topic of its own, each read in a group of its
     * own; read again while the JIT compilers took more than {@link #WARM_JIT_SHARE} of the nodes'
     * CPU (at most {@link #MAX_WARM_READS} reads): Kafka, running through the whole bench, is
     * measured warm, and a fresh deployment per row and round should be too.
     */
    private void warmUp(String name, GatewayDeployment d, Workloads gw, long warm) {
        int maxConsumers = Collections.max(p.consumers);
        int reads = 0;
        double jitShare;
        do {
            long cpu = d.cpuNanos();
            long jit = d.jitCpuNanos();
            try {
                var unused = gw.share(WARM_TOPIC, maxConsumers, true, (int) warm, 0);
            } catch (Exception e) {
                problem(name + ": the unmeasured warm-up read failed: " + SideBySide.rootCause(e));
                return;
            }
            reads++;
            long spent = d.cpuNanos() - cpu;
            jitShare = cpu < 0 || jit < 0 || spent <= 0 ? 0 : (d.jitCpuNanos() - jit) / (double) spent;
            log(String.format(Locale.ROOT, "  %s warm-up read %d: the JIT compilers took %.0f%% of the nodes' CPU",
                    name, reads, 100 * jitShare));
        } while (jitShare > WARM_JIT_SHARE && reads < MAX_WARM_READS);
        warmReads.put(name, reads);
    }

    /**
     * Samples, every 2 s while a gateway run reads its topic, how far the nodes' mirrors of it
     * are ahead of what their share-partitions have handed out, and how much of the topic is still
     * only in Kafka: whether the consumers are waiting on the mirror fetch. (Each sample reads
     * every node's Prometheus page, about 150 KB, as a scraper would.)
     */
    private static final class MirrorLead implements AutoCloseable {
        private final List<long[]> samples = Collections.synchronizedList(new ArrayList<>());
        private final long total;
        private final Thread thread;
        private volatile boolean running = true;

        MirrorLead(GatewayDeployment d, String topic, long total) {
            this.total = total;
            this.thread = new Thread(() -> {
                while (running) {
                    long[] ends = GatewayMetrics.mirrorAndShareEnds(d, topic);
                    if (ends[1] > 0 && ends[1] < total) {
                        samples.add(ends);
                    }
                    try {
                        Thread.sleep(2000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "bench-mirror-lead");
            thread.setDaemon(true);
            thread.start();
        }

        String summary() {
            List<Double> lead = new ArrayList<>();
            List<Double> behind = new ArrayList<>();
            synchronized (samples) {
                for (long[] s : samples) {
                    lead.add((double) (s[0] - s[1]));
                    behind.add((double) (total - s[0]));
                }
            }
            if (lead.isEmpty()) {
                return "mirror lead: no sample during the read";
            }
            return String.format(Locale.ROOT, "mirrors ahead of the share-partitions' end by %,.0f records (median of "
                    + "%d samples, min %,.0f, max %,.0f), with %,.0f records (median) not fetched from Kafka yet",
                    median(lead), lead.size(), Collections.min(lead), Collections.max(lead), median(behind));
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(5000);
        }
    }

    /** What was read at one edge of a run's window: the gateway nodes' request figures and the state topic's size. */
    record Snapshot(Map<String, double[]> requests, Map<String, Double> answers, StateUsage state) {}

    /**
     * The CPU reading a consumption run takes where its window opens (first record) and closes
     * (last record), which here also starts a {@link Snapshot} on a thread of its own at that
     * moment, so that the diagnostics cover the window, not the consumers' join and close (a
     * run's first ShareFetch requests wait out their long polls while the share-partitions start).
     */
    private final class Edges implements java.util.function.LongSupplier {
        private final java.util.function.LongSupplier cpu;
        /** The JIT compiler CPU of the process(es) measured: the gateway nodes, or Kafka in its own row. */
        private final java.util.function.LongSupplier jitCpu;
        private final GatewayDeployment d;
        private final String stateTopic;
        private final java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors
                .newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, "bench-edge-snapshot");
                    t.setDaemon(true);
                    return t;
                });
        private final List<java.util.concurrent.Future<Snapshot>> taken =
                Collections.synchronizedList(new ArrayList<>());

        Edges(java.util.function.LongSupplier cpu, GatewayDeployment d, String stateTopic) {
            this.cpu = cpu;
            this.jitCpu = d != null ? d::jitCpuNanos : kafka::jitCpuNanos;
            this.d = d;
            this.stateTopic = stateTopic;
        }

        /** The JIT compiler CPU at each edge, read with the CPU reading. */
        private final List<Long> jit = Collections.synchronizedList(new ArrayList<>());

        @Override
        public long getAsLong() {
            long c = cpu.getAsLong();
            jit.add(jitCpu.getAsLong());
            taken.add(executor.submit(() -> new Snapshot(
                    d == null ? Map.of() : GatewayMetrics.requestDurations(d),
                    d == null ? Map.of() : GatewayMetrics.shareFetchAnswers(d), stateUsage(stateTopic))));
            return c;
        }

        /** The JIT compiler CPU over the window, or -1 if unreadable. */
        long jitNanos() {
            synchronized (jit) {
                if (jit.size() < 2 || jit.get(0) < 0 || jit.get(jit.size() - 1) < 0) {
                    return -1;
                }
                return jit.get(jit.size() - 1) - jit.get(0);
            }
        }

        /** The snapshots in the order their edges came (the window's opening first). */
        List<Snapshot> snapshots() {
            List<Snapshot> out = new ArrayList<>();
            synchronized (taken) {
                for (var f : taken) {
                    try {
                        out.add(f.get(30, TimeUnit.SECONDS));
                    } catch (Exception e) {
                        log("  a window snapshot failed: " + SideBySide.rootCause(e));
                    }
                }
            }
            executor.shutdown();
            return out;
        }
    }

    /** Kafka's own share-state topic, where its share coordinator writes the native row's state. */
    static final String KAFKA_STATE_TOPIC = "__share_group_state";

    /** A share-state topic's size on the Kafka broker: the sum of its partitions' end offsets and bytes. */
    record StateUsage(long offsets, long bytes) {}

    /** The state topic's end offsets and bytes now; zeros if it does not exist yet, null if unreadable. */
    private StateUsage stateUsage(String topic) {
        try {
            var described = kafkaAdmin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS);
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> specs =
                    new LinkedHashMap<>();
            described.get(topic).partitions().forEach(pi -> specs.put(
                    new org.apache.kafka.common.TopicPartition(topic, pi.partition()),
                    org.apache.kafka.clients.admin.OffsetSpec.latest()));
            long offsets = 0;
            for (var e : kafkaAdmin.listOffsets(specs).all().get(10, TimeUnit.SECONDS).values()) {
                offsets += e.offset();
            }
            long bytes = 0;
            for (var dir : kafkaAdmin.describeLogDirs(List.of(1)).allDescriptions().get(10, TimeUnit.SECONDS)
                    .get(1).values()) {
                for (var replica : dir.replicaInfos().entrySet()) {
                    if (replica.getKey().topic().equals(topic)) {
                        bytes += replica.getValue().size();
                    }
                }
            }
            return new StateUsage(offsets, bytes);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
                return new StateUsage(0, 0);
            }
            log("  reading the size of " + topic + " failed: " + SideBySide.rootCause(e));
            return null;
        } catch (Exception e) {
            log("  reading the size of " + topic + " failed: " + SideBySide.rootCause(e));
            return null;
        }
    }

    /**
     * Notes where a measured run's work went, over its window (first record to last, from the
     * {@link Edges} snapshots): the share state written to Kafka (its state topic's offsets, i.e.
     * state records plus transaction markers, and bytes, per record accepted) and, for a gateway,
     * its nodes' ShareFetch and ShareAcknowledge counts and mean times and how the ShareFetch long
     * polls were answered.
     */
    private void diagnose(String what, Workloads.ConsumeRun run, String stateTopic, List<Snapshot> edges) {
        if (run == null || run.records() <= 0 || edges.size() < 2) {
            return;
        }
        Snapshot a = edges.get(0);
        Snapshot b = edges.get(edges.size() - 1);
        StringBuilder sb = new StringBuilder(what).append(": ");
        if (a.state() != null && b.state() != null) {
            long offsets = b.state().offsets() - a.state().offsets();
            long bytes = b.state().bytes() - a.state().bytes();
            sb.append(String.format(Locale.ROOT, "`%s` grew by %,d offsets (%.1f per 1,000 records accepted) and "
                    + "%,d bytes (%.1f B per record)", stateTopic, offsets, offsets * 1000.0 / run.records(), bytes,
                    bytes / (double) run.records()));
        }
        for (String api : List.of("ShareFetch", "ShareAcknowledge")) {
            double[] x = a.requests().getOrDefault(api, new double[2]);
            double[] y = b.requests().getOrDefault(api, new double[2]);
            double n = y[1] - x[1];
            if (n > 0) {
                sb.append(String.format(Locale.ROOT, "; %s: %,.0f requests (%.0f records accepted per request), "
                        + "%.1f ms each on average", api, n, run.records() / n, (y[0] - x[0]) * 1000 / n));
            }
        }
        StringBuilder how = new StringBuilder();
        b.answers().forEach((outcome, count) -> {
            double delta = count - a.answers().getOrDefault(outcome, 0.0);
            if (delta > 0) {
                how.append(how.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %,.0f", outcome, delta));
            }
        });
        if (how.length() > 0) {
            sb.append("; ShareFetch long polls answered: ").append(how);
        }
        diagnostics.add(sb.toString());
        log("  " + sb);
    }

    interface Run {
        Workloads.ConsumeRun run() throws Exception;
    }

    /**
     * The part of the CPU the JIT compilers took in the window (Kafka's in its row, the gateway
     * nodes' in theirs): each gateway deployment is a fresh JVM per row and round, where Kafka
     * runs through the whole bench.
     */
    private static final String JIT_LABEL = "↳ of which JIT compiler threads (Kafka's in its row, the nodes' in theirs)";

    static String rateKey(int c) {
        return "rate-" + c + "c";
    }

    private String rateLabel(int c) {
        return "Share consume, " + c + " consumer" + (c > 1 ? "s" : "") + ", " + p.partitions
                + " partitions, explicit ACCEPT per record";
    }

    /** One measured run into the results; returns it, or null when it failed. */
    private Workloads.ConsumeRun measure(String row, int c, Run run, Edges edges) {
        Workloads.ConsumeRun r;
        try {
            r = run.run();
        } catch (Exception e) {
            problem(row + " " + c + " consumers: the run failed: " + SideBySide.rootCause(e));
            unavailable(row, c);
            return null;
        }
        if (!r.complete()) {
            problem(row + " " + c + " consumers: stopped at the time cap (" + p.cap.toSeconds() + " s) after "
                    + r.records() + " records");
        }
        boolean gateway = !row.equals(KAFKA);
        double kafkaCpu = perRecord(gateway ? r.upstreamCpuNanos() : r.brokerCpuNanos(), r.records());
        double gwCpu = gateway ? perRecord(r.brokerCpuNanos(), r.records()) : Double.NaN;
        double total = gateway ? kafkaCpu + gwCpu : kafkaCpu;
        results.add(rateKey(c), rateLabel(c), "rec/s", true, row, r.recordsPerSec());
        results.add("cpu-kafka-" + c + "c", "↳ Kafka broker CPU per record", "µs", false, row, kafkaCpu);
        results.add("cpu-gw-" + c + "c", "↳ gateway nodes' CPU per record (all nodes)", "µs", false, row, gwCpu);
        long jit = edges.jitNanos();
        results.add("cpu-jit-" + c + "c", JIT_LABEL, "µs", false, row, jit < 0 ? Double.NaN : perRecord(jit, r.records()));
        results.add("cpu-total-" + c + "c", "↳ CPU per record, Kafka broker + gateway nodes", "µs", false, row, total);
        results.add("first-" + c + "c", "↳ subscribe to first record", "ms", false, row, r.firstRecordMs());
        log(String.format(Locale.ROOT, "  %-5s %2d consumers: %,10.0f rec/s; CPU per record: Kafka %.2f µs, gateways "
                + "%.2f µs, total %.2f µs; first record after %.0f ms", row, c, r.recordsPerSec(), kafkaCpu, gwCpu,
                total, r.firstRecordMs()));
        return r;
    }

    private void unavailable(String row, int c) {
        results.addUnavailable(rateKey(c), rateLabel(c), "rec/s", true, row);
        results.addUnavailable("cpu-kafka-" + c + "c", "↳ Kafka broker CPU per record", "µs", false, row);
        results.addUnavailable("cpu-gw-" + c + "c", "↳ gateway nodes' CPU per record (all nodes)", "µs", false, row);
        results.addUnavailable("cpu-jit-" + c + "c", JIT_LABEL, "µs", false, row);
        results.addUnavailable("cpu-total-" + c + "c", "↳ CPU per record, Kafka broker + gateway nodes", "µs", false, row);
        results.addUnavailable("first-" + c + "c", "↳ subscribe to first record", "ms", false, row);
    }

    /** µs of CPU per record; NaN below {@link SideBySide#MIN_CPU_TICKS} clock ticks, too coarse to divide. */
    static double perRecord(long cpuNanos, long records) {
        long tick = 1_000_000_000L / BrokerProcess.clockTicksPerSecond();
        if (cpuNanos < SideBySide.MIN_CPU_TICKS * tick || records <= 0) {
            return Double.NaN;
        }
        return cpuNanos / 1e3 / records;
    }

    private void failover(int timeoutMs) throws Exception {
        String name = "fo-" + timeoutMs;
        String topic = "failover-" + timeoutMs;
        log("failover, pier.gateway.session.timeout.ms=" + timeoutMs + ": 3 gateway nodes, " + p.failoverConsumers
                + " share consumers, " + p.failoverRate + " rec/s produced to Kafka over " + p.partitions + " partitions");
        try (Workloads kw = new Workloads(kafka.bootstrap(), p.cap, kafka::cpuNanos)) {
            kw.createTopic(topic, p.partitions);
        }
        GatewayDeployment d;
        try {
            d = GatewayDeployment.start(name, 3, work.resolve(name), pierFlags(), pierClasspath,
                    work.resolve("pier-cds.jsa"), kafka.bootstrap(), timeoutMs, topic);
        } catch (Exception e) {
            String why = "the gateway nodes did not start or settle: " + SideBySide.rootCause(e);
            problem(name + ": " + why);
            failovers.add(new FailoverRun(timeoutMs, List.of(), "", why));
            return;
        }
        List<Failover.Kill> kills = new ArrayList<>();
        String note = "";
        try (d; Failover f = new Failover(d, kafka.bootstrap(), topic, p.partitions, "bench-failover-" + timeoutMs,
                p.failoverConsumers, p.failoverRate)) {
            f.start();
            if (!f.awaitFlowing(Duration.ofSeconds(60))) {
                note = "records never flowed from every partition before the first kill (stalled: " + f.stalled() + ")";
                problem(name + ": " + note);
            }
            Duration wait = Duration.ofMillis(timeoutMs).plusSeconds(60);
            for (int k = 0; k < p.kills; k++) {
                try {
                    Failover.Kill kill = f.killOne(1 + k % 3, wait);
                    kills.add(kill);
                    if (kill.afterRestart().startsWith("partitions")) {
                        problem(name + ", kill " + (k + 1) + " (node " + kill.node() + "), after the node's restart: "
                                + kill.afterRestart());
                    }
                    if (Double.isNaN(kill.allMs())) {
                        problem(name + ", kill " + (k + 1) + " (node " + kill.node() + "): some of its partitions "
                                + "were not delivered again within " + wait.toSeconds() + " s");
                    }
                } catch (Exception e) {
                    note = "kill " + (k + 1) + " failed: " + SideBySide.rootCause(e);
                    problem(name + ": " + note);
                    break;
                }
            }
            String counts = f.counts();
            log("  " + counts);
            failovers.add(new FailoverRun(timeoutMs, kills, counts, note));
        }
    }

    private void deleteTopics(java.util.Collection<String> topics) {
        Properties props = new Properties();
        props.put("bootstrap.servers", kafka.bootstrap());
        try (Admin admin = Admin.create(props)) {
            admin.deleteTopics(topics).all().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            log("  deleting " + topics + " failed: " + SideBySide.rootCause(e));
        }
    }

    /** The Pier JVMs' flags, with {@code PIER_BENCH_PIER_JVM_OPTS} as pier-vs-kafka.sh adds them. */
    private List<String> pierFlags() {
        String extra = System.getenv().getOrDefault("PIER_BENCH_PIER_JVM_OPTS", "").trim();
        if (extra.isEmpty()) {
            return jvmFlags;
        }
        List<String> all = new ArrayList<>(jvmFlags);
        all.addAll(List.of(extra.split("\\s+")));
        return all;
    }

    private void problem(String s) {
        problems.add(s);
        log("  PROBLEM: " + s);
    }

    static void log(String s) {
        SideBySide.log(s);
    }

    // ---- the page ----

    static String header(String row) {
        return switch (row) {
            case KAFKA -> "Kafka native share group";
            case GW1 -> "Pier gateway, 1 node";
            case GW3 -> "Pier gateway, 3 nodes";
            default -> row;
        };
    }

    private static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        double a = Math.abs(v);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private String cell(String key, String row) {
        if (results.unavailable(key, row)) {
            return "n/a";
        }
        return fmt(results.median(key, row));
    }

    String markdown(String command, long seconds, List<String> flags) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Pier gateway vs Kafka's native share groups (issue 16)\n\n");
        sb.append("Generated by `").append(command).append("` on ").append(SideBySide.now())
                .append(p.quick ? " (**quick mode**: small counts, one round; indicative only)" : "")
                .append(", in ").append(seconds / 60).append(" min ").append(seconds % 60).append(" s.\n\n");
        sb.append("- Machine: ").append(SideBySide.machine()).append(". Kafka, the gateway nodes and the client JVM "
                + "share it (and other processes may: the figures are noisy; compare within one run).\n");
        sb.append("- Upstream: one Apache Kafka 4.4.0 broker, single-node KRaft (broker + controller in one JVM), "
                + "defaults (no fsync), replication factor 1 for its internal topics, share groups on (the "
                + "release's default feature level)").append(kafkaNote.isEmpty() ? "" : ", " + kafkaNote)
                .append(". It serves the native row's share group, and is the gateways' upstream: records, share "
                        + "state (transactional writes to the state topic), the gateway group.\n");
        sb.append("- Gateway nodes: `pier gateway --upstream-bootstrap KAFKA --node-id N --port P`, each deployment "
                + "with a gateway group, state topic and config topic of its own on the upstream; started fresh "
                + "for each row and round (empty mirrors) and stopped after it.\n");
        sb.append("- Every JVM: `").append(String.join(" ", flags)).append("`, on 127.0.0.1.\n");
        sb.append(String.format(Locale.ROOT, "- Workload: %,d records of 100 B produced to Kafka directly, to a "
                + "%d-partition topic of the row's own (round-robin), then read by K share consumers (stock "
                + "kafka-clients 4.4.0 `KafkaShareConsumer`, explicit ACCEPT of every record) in a new share group "
                + "with `share.auto.offset.reset=earliest`, until every record is accepted; records/s from the "
                + "first record received to the last. Gateway rows bootstrap on every node of their deployment. "
                + "Rounds: %d, the row order rotating each round; figures are medians over the rounds.\n",
                p.records, p.partitions, p.rounds));
        sb.append(String.format(Locale.ROOT, "- Warm-up, unmeasured: %,d records of a topic of its own read once "
                + "through Kafka's share group before any row (client JVM and Kafka), and through each gateway "
                + "deployment before its measured runs, again (in a new group) while its JIT compilers took more "
                + "than %.0f%% of its CPU in the read before, at most %d reads (reads taken: %s). Its share-partitions "
                + "of that topic stay, so its mirrors keep polling that topic's end during the rows, a small cost in "
                + "both CPU figures.\n",
                p.warmRecords, 100 * WARM_JIT_SHARE, MAX_WARM_READS, warmReads.isEmpty() ? "none"
                        : warmReads.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                                .collect(java.util.stream.Collectors.joining(", "))));
        sb.append("- **CPU per record**: a process's CPU time (user + system, all threads, `/proc/<pid>/stat`) over "
                + "the row's window, divided by the records accepted, in µs; for gateway rows the gateway nodes "
                + "(summed) and the Kafka broker separately, and their sum: the gateway's cost is on top of its "
                + "upstream's. It moves less than throughput when other processes take the cores.\n");
        sb.append("- Ratios: gateway / Kafka native, of the medians. ↑: higher is better, ↓: lower is better; "
                + "`–`: no figure (too little CPU to read, or not applicable); `n/a`: the run failed.\n\n");
        List<String> ran = ALL_ROWS.stream().filter(results::ran).toList();
        if (!ran.isEmpty()) {
            sb.append("| Figure | Unit |");
            ran.forEach(r -> sb.append(' ').append(header(r)).append(" |"));
            List<String> gws = ran.contains(KAFKA) ? ran.stream().filter(r -> !r.equals(KAFKA)).toList() : List.of();
            gws.forEach(g -> sb.append(' ').append(g.equals(GW1) ? "1 node" : "3 nodes").append(" / Kafka |"));
            sb.append("\n|---|---|");
            ran.forEach(r -> sb.append("---:|"));
            gws.forEach(g -> sb.append("---:|"));
            sb.append('\n');
            for (Results.Metric m : results.metrics()) {
                sb.append("| ").append(m.label()).append(" | ").append(m.unit()).append(m.higherIsBetter() ? " ↑" : " ↓")
                        .append(" |");
                ran.forEach(r -> sb.append(' ').append(cell(m.key(), r)).append(" |"));
                boolean ratio = !m.key().startsWith("cpu-gw-") && !m.key().startsWith("cpu-jit-");
                for (String g : gws) {
                    double v = results.median(m.key(), g) / results.median(m.key(), KAFKA);
                    sb.append(' ').append(ratio ? fmt(v) : "").append(" |");
                }
                sb.append('\n');
            }
            sb.append("\nEvery round (rec/s and µs; in round order):\n\n| Figure |");
            ran.forEach(r -> sb.append(' ').append(header(r)).append(" |"));
            sb.append("\n|---|");
            ran.forEach(r -> sb.append("---|"));
            sb.append('\n');
            for (Results.Metric m : results.metrics()) {
                sb.append("| ").append(m.key()).append(" |");
                for (String r : ran) {
                    sb.append(' ').append(results.values(m.key(), r).stream().map(GatewayBench::fmt)
                            .collect(Collectors.joining(", "))).append(" |");
                }
                sb.append('\n');
            }
            if (!splits.isEmpty()) {
                sb.append("\nPartitions of the measured topics per leading gateway node (a topic-partition goes to "
                        + "the node serving its state partition, `hash(topic id, partition) mod 8`):\n\n");
                splits.forEach((k, v) -> sb.append("- ").append(k).append(": ").append(v).append('\n'));
            }
        }
        if (!diagnostics.isEmpty()) {
            sb.append("\nWhere the work went, per measured run, over its window (first record to last): the "
                    + "share-state topic on Kafka (offsets: state records and transaction markers); for gateway rows "
                    + "the nodes' own request counts and mean times (`pier_request_duration_seconds`; a ShareFetch's "
                    + "time includes its long-poll wait) and how their ShareFetch long polls were answered "
                    + "(`pier_long_poll_answers_total`: `at_once` with records, `woken` by records after a wait, "
                    + "`max_wait` empty after the full wait):\n\n");
            diagnostics.forEach(x -> sb.append("- ").append(x).append('\n'));
        }
        if (!failovers.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "\n## Failover\n\n3 gateway nodes; %d share consumers (explicit "
                    + "ACCEPT) bootstrapped on all three; a producer writing %,d records/s of 100 B to Kafka "
                    + "directly, round-robin over %d partitions. Each kill: `kill -9` of one node (rotating; one "
                    + "that leads some of the topic's partitions per the nodes' metadata just before), then the "
                    + "time to the first record of one of its partitions delivered again (a record created after "
                    + "the node was dead, or a redelivery), to a record of each of its partitions, and to the "
                    + "survivors' metadata naming other leaders for all of them; then the node is started again on "
                    + "its port, and the next kill waits until the nodes have settled and every partition flows.\n\n",
                    p.failoverConsumers, p.failoverRate, p.partitions));
            sb.append("| `pier.gateway.session.timeout.ms` | kills | kill → first record of its partitions again, "
                    + "min / median / max (ms) | kill → every one of its partitions again, median (ms) | kill → "
                    + "survivors' metadata moved them, median (ms) |\n|---:|---:|---|---:|---:|\n");
            for (FailoverRun f : failovers) {
                List<Double> first = f.kills().stream().map(Failover.Kill::firstMs).toList();
                sb.append(String.format(Locale.ROOT, "| %,d | %d | %s | %s | %s |\n", f.sessionTimeoutMs(),
                        f.kills().size(), minMedMax(first),
                        fmt(median(f.kills().stream().map(Failover.Kill::allMs).toList())),
                        fmt(median(f.kills().stream().map(Failover.Kill::metadataMs).toList()))));
            }
            sb.append("\nEvery kill:\n\n| timeout (ms) | node | partitions it led | coordinated the group | first "
                    + "record again (ms) | how | all its partitions (ms) | metadata (ms) | after the node's restart |\n"
                    + "|---:|---:|---|---|---:|---|---:|---:|---|\n");
            for (FailoverRun f : failovers) {
                for (Failover.Kill k : f.kills()) {
                    sb.append(String.format(Locale.ROOT, "| %,d | %d | %s | %s | %s | %s | %s | %s | %s |\n",
                            f.sessionTimeoutMs(), k.node(), k.partitions(), k.coordinator() ? "yes" : "no",
                            fmt(k.firstMs()), k.firstHow() == null ? "–" : k.firstHow(), fmt(k.allMs()),
                            fmt(k.metadataMs()), k.afterRestart()));
                }
            }
            sb.append('\n');
            for (FailoverRun f : failovers) {
                sb.append("- ").append(String.format(Locale.ROOT, "%,d ms", f.sessionTimeoutMs())).append(": ")
                        .append(f.counts().isEmpty() ? "" : f.counts())
                        .append(f.note().isEmpty() ? "" : (f.counts().isEmpty() ? "" : "; ") + f.note()).append('\n');
            }
        }
        if (!problems.isEmpty()) {
            sb.append("\n## Problems in this run\n\n");
            problems.forEach(x -> sb.append("- ").append(x).append('\n'));
        }
        return sb.toString();
    }

    static double median(List<Double> values) {
        List<Double> v = values.stream().filter(x -> !Double.isNaN(x)).sorted().toList();
        if (v.isEmpty()) {
            return Double.NaN;
        }
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    private static String minMedMax(List<Double> values) {
        List<Double> v = values.stream().filter(x -> !Double.isNaN(x)).sorted().toList();
        String missing = v.size() < values.size() ? " (" + (values.size() - v.size()) + " never)" : "";
        if (v.isEmpty()) {
            return "–" + missing;
        }
        return fmt(v.get(0)) + " / " + fmt(median(v)) + " / " + fmt(v.get(v.size() - 1)) + missing;
    }
}
