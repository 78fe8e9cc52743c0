package io.pier.bench.harness;

import io.pier.bench.jmh.SharePartitionBench;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs Pier (durable and none) and Apache Kafka side by side on this machine, in alternating
 * rounds, with identical client workloads, and writes a Markdown table of medians and ratios.
 * Started by {@code bench/pier-vs-kafka.sh}, which builds Pier and fetches Kafka first.
 */
public final class SideBySide {
    static final String DURABLE = "pier-durable";
    static final String NONE = "pier-none";
    static final String KAFKA = "kafka";
    static final String KAFKA_FSYNC = "kafka-fsync";
    static final List<String> ALL_BROKERS = List.of(DURABLE, NONE, KAFKA, KAFKA_FSYNC);
    /**
     * Pier durable built from another revision ({@code bench/pier-vs-kafka.sh --baseline REV}), to
     * measure a change before and after in one run, alternating with the others; only with
     * {@code --baseline-cp}, never in the default set.
     */
    static final String BASELINE = "pier-baseline";
    /** Every broker the page knows, in its column order. */
    static final List<String> KNOWN_BROKERS = List.of(DURABLE, BASELINE, NONE, KAFKA, KAFKA_FSYNC);
    /** The throwaway broker the client JVM warms up against before round 1: the quickest to start and serve. */
    static final String WARMUP_BROKER = NONE;

    /**
     * Counts and durations of one run; {@code --quick} shrinks them. {@code latencyRates}: the
     * produce rates of the latency rows, each run with the producer's default linger.ms and with 0.
     */
    record Params(int rounds, int produceSmall, int produceLarge, int shareRecords, int groupRecords,
            List<Integer> latencyRates, int latencySeconds, Duration cap, boolean quick) {
        static Params fullRun() {
            // 1,000,000 share records: with 100,000 a run lasted 0.1-0.5 s on Pier, mostly the
            // consumers' ramp-up, and its rate (16 consumers on 10 partitions: 0.72x Kafka) said
            // little of the steady state (2.1x with 1,000,000). 3,000,000 consumer-group records
            // for the same reason: 1,000,000 lasted about 1 s at the 1-consumer rate, and the three
            // rounds of one build spread up to 1.7x (0.70 to 1.18 M rec/s on Pier, 2026-12-04);
            // with 3,000,000, at most 1.33x on every row of two runs (Kafka's rows still up to 1.57x).
            return new Params(3, 200_000, 50_000, 1_000_000, 3_000_000, List.of(1_000, 5_000), 8,
                    Duration.ofSeconds(60), false);
        }

        static Params quickRun() {
            return new Params(1, 40_000, 10_000, 10_000, 100_000, List.of(1_000, 5_000), 3, Duration.ofSeconds(30), true);
        }

        /**
         * The unmeasured pass each broker runs before its measured one: every selected workload once,
         * long enough for the broker's JIT compiler to reach its hot paths (a share run of 1,000,000
         * records lasted 2 s on Pier, and its compiler threads took half the broker's CPU in it).
         * The consumer-group runs read 500,000 too: with 200,000, a group row run alone still spent
         * half of Pier's CPU in the compiler threads (async-profiler, group-classic-1c-10p).
         */
        static Params brokerWarmupRun() {
            return new Params(1, 50_000, 10_000, 500_000, 500_000, List.of(1_000), 2, Duration.ofSeconds(60), true);
        }

        /** The unmeasured warm-up pass of the client JVM: every workload once, small. */
        static Params warmupRun() {
            return new Params(1, 20_000, 5_000, 2_000, 20_000, List.of(1_000), 1, Duration.ofSeconds(30), true);
        }

        Params withRounds(int r) {
            return new Params(r, produceSmall, produceLarge, shareRecords, groupRecords, latencyRates, latencySeconds,
                    cap, quick);
        }

        Params withShareRecords(int n) {
            return new Params(rounds, produceSmall, produceLarge, n, groupRecords, latencyRates, latencySeconds, cap,
                    quick);
        }

        Params withGroupRecords(int n) {
            return new Params(rounds, produceSmall, produceLarge, shareRecords, n, latencyRates, latencySeconds, cap,
                    quick);
        }
    }

    /** What the warm-up pass did, for the page; empty when it was skipped. */
    String warmupNote = "";
    /** The kcat version used, or why the librdkafka rows are missing. */
    String kcatNote = "";

    private final Params params;
    private final String pierClasspath;
    /** The baseline build's classpath, or null when no baseline runs. */
    String baselineClasspath;
    private final Path kafkaLib;
    private final Path work;
    private final List<String> jvmFlags;
    private final boolean jfr;
    private final Results results = new Results();
    private final List<Path> jfrFiles = new ArrayList<>();
    private volatile BrokerProcess current;
    private Kcat kcat;
    /** The certificate and SASL user of the security rows; null when none of them runs. */
    private Security security;
    String only = "";
    /** Records per produce and per share run of the security rows; 0: the produce and share rows' counts. */
    int securityRecords;
    List<String> brokers = ALL_BROKERS;
    boolean warmup = true;
    /** Whether each broker runs {@link Params#brokerWarmupRun} before its measured pass. */
    boolean brokerWarmup = true;
    /** What the brokers' warm-up passes did, for the page; empty when they were skipped. */
    String brokerWarmupNote = "";

    SideBySide(Params params, String pierClasspath, Path kafkaLib, Path work, List<String> jvmFlags, boolean jfr) {
        this.params = params;
        this.pierClasspath = pierClasspath;
        this.kafkaLib = kafkaLib;
        this.work = work;
        this.jvmFlags = jvmFlags;
        this.jfr = jfr;
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean jmh = true;
        boolean jfr = false;
        boolean warmup = true;
        boolean brokerWarmup = true;
        String only = "";
        List<String> brokers = ALL_BROKERS;
        Integer rounds = null;
        Integer records = null;
        Integer groupRecords = null;
        int securityRecords = 0;
        String pierCp = null;
        String baselineCp = null;
        Path kafkaLib = null;
        Path work = Path.of("pier-bench/target/bench-run");
        Path out = null;
        String heap = "1g";
        String command = "bench/pier-vs-kafka.sh";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-jmh" -> jmh = false;
                case "--jfr" -> jfr = true;
                case "--no-warmup" -> warmup = false;
                case "--no-broker-warmup" -> brokerWarmup = false;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--group-records" -> groupRecords = Integer.parseInt(args[++i]);
                case "--security-records" -> securityRecords = Integer.parseInt(args[++i]);
                case "--pier-cp" -> pierCp = args[++i];
                case "--baseline-cp" -> baselineCp = args[++i];
                case "--kafka-lib" -> kafkaLib = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--heap" -> heap = args[++i];
                case "--command" -> command = args[++i];
                case "--only" -> only = args[++i];
                case "--brokers" -> brokers = List.of(args[++i].split(","));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (pierCp == null || kafkaLib == null) {
            throw new IllegalArgumentException("--pier-cp and --kafka-lib are required");
        }
        for (String b : brokers) {
            if (!KNOWN_BROKERS.contains(b)) {
                throw new IllegalArgumentException("unknown broker " + b + "; known: " + String.join(",", KNOWN_BROKERS));
            }
            if (b.equals(BASELINE) && baselineCp == null) {
                throw new IllegalArgumentException(BASELINE + " needs a baseline build: bench/pier-vs-kafka.sh --baseline REV");
            }
        }
        Params p = quick ? Params.quickRun() : Params.fullRun();
        if (rounds != null) {
            p = p.withRounds(rounds);
        }
        if (records != null) {
            p = p.withShareRecords(records);
        }
        if (groupRecords != null) {
            p = p.withGroupRecords(groupRecords);
        }
        if (out == null) {
            out = quick ? work.resolve("benchmarks-quick.md") : Path.of("docs/benchmarks.md");
        }
        List<String> flags = List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                "-Djava.awt.headless=true");
        long t0 = System.nanoTime();
        SideBySide bench = new SideBySide(p, pierCp, kafkaLib, work, flags, jfr);
        bench.only = only;
        bench.securityRecords = securityRecords;
        bench.brokers = brokers;
        bench.baselineClasspath = baselineCp;
        bench.warmup = warmup;
        bench.brokerWarmup = brokerWarmup;
        bench.run();
        String jmhSection = jmh ? runJmh(quick) : "";
        String jfrSection = bench.jfrSection();
        long minutes = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        Report report = new Report(bench.results, p, flags, command, minutes, jmhSection, jfrSection,
                bench.warmupNote, bench.kcatNote);
        report.brokerWarmupNote = bench.brokerWarmupNote;
        report.securityRecords = securityRecords;
        String md = report.markdown();
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, md);
        System.out.println(md);
        System.out.println("[bench] wrote " + out + " after " + minutes + " s");
    }

    void run() throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            BrokerProcess b = current;
            if (b != null && b.process != null) {
                b.process.destroyForcibly();
            }
        }, "stop-broker"));
        deleteTree(work);
        Files.createDirectories(work);
        if (wantsSecurity()) {
            security = Security.create(work.resolve("certs"));
            log("security rows: SSL and SASL_SSL (PLAIN) listeners on every broker, with a self-signed certificate in "
                    + security.keyStore);
        }
        kcat = Kcat.find(params.cap);
        if (kcat == null) {
            kcatNote = "kcat not found on the PATH: the librdkafka rows were skipped (Debian: `apt-get install kcat`).";
            log(kcatNote);
        } else {
            kcatNote = kcat.version();
        }
        if (warmup) {
            warmUp();
        } else {
            warmupNote = "";
            log("no warm-up pass (--no-warmup): the first broker of round 1 runs on a cold client JVM");
        }
        for (int r = 0; r < params.rounds; r++) {
            for (int i = 0; i < brokers.size(); i++) {
                String b = brokers.get((i + r) % brokers.size());
                boolean record = jfr && r == params.rounds - 1 && !b.equals(KAFKA);
                runBroker(b, r, record);
            }
        }
    }

    private BrokerProcess create(String broker, Path dir) throws IOException {
        BrokerProcess bp = createPlain(broker, dir);
        if (security != null) {
            bp.enableSecurity(security);
        }
        return bp;
    }

    private BrokerProcess createPlain(String broker, Path dir) throws IOException {
        return switch (broker) {
            case DURABLE -> new PierBroker(broker, pierFlags(), dir, pierClasspath, "durable");
            case NONE -> new PierBroker(broker, pierFlags(), dir, pierClasspath, "none");
            case BASELINE -> new PierBroker(broker, pierFlags(), dir, baselineClasspath, "durable", "pier-cds-baseline.jsa");
            case KAFKA -> new KafkaBroker(broker, jvmFlags, dir, kafkaLib, false);
            case KAFKA_FSYNC -> new KafkaBroker(broker, jvmFlags, dir, kafkaLib, true);
            default -> throw new IllegalArgumentException("unknown broker " + broker);
        };
    }

    /**
     * The Pier JVMs' flags: the common ones, then {@code PIER_BENCH_PIER_JVM_OPTS} (space-separated),
     * for a profiler agent on Pier alone, say, without touching what Kafka runs with.
     */
    private List<String> pierFlags() {
        String extra = System.getenv().getOrDefault("PIER_BENCH_PIER_JVM_OPTS", "").trim();
        if (extra.isEmpty()) {
            return jvmFlags;
        }
        List<String> all = new ArrayList<>(jvmFlags);
        all.addAll(List.of(extra.split("\\s+")));
        return all;
    }

    /**
     * Before round 1: every selected workload once, unmeasured and small, against a throwaway
     * broker, so that the first measured broker does not pay for the client JVM's class loading
     * and JIT compilation. Its figures go to a results table that is thrown away.
     */
    private void warmUp() throws Exception {
        Params w = Params.warmupRun();
        Path dir = work.resolve("warmup-" + WARMUP_BROKER);
        log("warm-up of the client JVM (unmeasured): every workload once against a throwaway " + WARMUP_BROKER);
        long t0 = System.nanoTime();
        try (BrokerProcess broker = create(WARMUP_BROKER, dir)) {
            current = broker;
            broker.start(List.of());
            try (Workloads wl = new Workloads(broker.bootstrap(), w.cap, broker::cpuNanos)) {
                workloads(new Pass(w, new Results(), true, 0), wl, broker, WARMUP_BROKER);
            }
        }
        current = null;
        long seconds = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        deleteTree(dir);
        warmupNote = String.format(Locale.ROOT, "before round 1, every workload%s ran once, unmeasured, against a "
                        + "throwaway Pier (`none`) broker that was then stopped (produce %,d × 100 B and %,d × 1 KB, "
                        + "%,d records per share run, %d s of latency at %,d rec/s; %d s in all), so the first "
                        + "measured broker does not pay for the client JVM's class loading and JIT compilation",
                only.isEmpty() ? "" : " matching `--only " + only + "`", w.produceSmall, w.produceLarge,
                w.shareRecords, w.latencySeconds, w.latencyRates.get(0), seconds);
        log("warm-up done in " + seconds + " s");
    }

    /** One pass of the workloads: its counts, where its figures go, whether it is the warm-up, and its round (from 0). */
    record Pass(Params p, Results results, boolean warmup, int round) {}

    private void runBroker(String b, int round, boolean recordJfr) throws Exception {
        Path dir = work.resolve("round" + (round + 1) + "-" + b);
        List<String> extra = new ArrayList<>();
        if (recordJfr) {
            Path f = dir.resolve(b + ".jfr").toAbsolutePath();
            extra.add("-XX:StartFlightRecording=filename=" + f + ",settings=profile,method-profiling=max,dumponexit=true");
            jfrFiles.add(f);
        }
        log("round " + (round + 1) + "/" + params.rounds + ": " + b);
        try (BrokerProcess broker = create(b, dir)) {
            current = broker;
            long startup = broker.start(extra);
            results.add("startup", "Start-up to first answered request", "ms", false, b, startup);
            log("  start-up " + startup + " ms");
            Thread.sleep(params.quick ? 1000 : 2000);
            results.add("rss-idle", "Resident memory, idle after start-up", "MiB", false, b, broker.rssMiB());
            if (brokerWarmup) {
                warmUpBroker(broker, b, round);
            }
            try (RssSampler rss = new RssSampler(broker.pid());
                    Workloads w = new Workloads(broker.bootstrap(), params.cap, broker::cpuNanos)) {
                workloads(new Pass(params, results, false, round), w, broker, b);
                results.add("rss-load", "Resident memory, peak under load", "MiB", false, b, rss.peakMiB());
            }
        }
    }

    /**
     * The broker's own warm-up, after its idle figures and before its measured pass: every selected
     * workload once, unmeasured, on topics of its own ({@link #WARMUP_TOPIC_PREFIX}). Without it
     * each row paid for compiling the broker paths it was the first to take: on Pier, whose share
     * runs last about 2 s, the JIT compiler threads took about half the broker's CPU over the share
     * rows, so "broker CPU per record" measured mostly the compiler. Kafka gets the same pass.
     */
    private void warmUpBroker(BrokerProcess broker, String b, int round) throws Exception {
        Params w = Params.brokerWarmupRun();
        long t0 = System.nanoTime();
        try (Workloads wl = new Workloads(broker.bootstrap(), w.cap, broker::cpuNanos, Map.of(), WARMUP_TOPIC_PREFIX)) {
            workloads(new Pass(w, new Results(), true, round), wl, broker, b);
        }
        long seconds = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        log("  broker warm-up (unmeasured) done in " + seconds + " s");
        brokerWarmupNote = String.format(Locale.ROOT, "each broker, after its idle figures and before its measured "
                        + "workloads, ran every selected workload once, unmeasured, on topics of its own (produce "
                        + "%,d × 100 B and %,d × 1 KB, %,d records per share run, %,d per consumer-group run, %d s of "
                        + "latency), so that its JIT compiler has reached the paths the rows measure (`--no-broker-warmup` "
                        + "skips it: a row then also pays for compiling what it is the first to run)",
                w.produceSmall, w.produceLarge, w.shareRecords, w.groupRecords, w.latencySeconds);
    }

    /** The key counts of the share-keyed rows (issue 18). */
    static final int[] KEYED_KEY_COUNTS = {10, 1_000, 100_000};

    /**
     * Issue 18: 8 explicit consumers on one partition of keyed records (key i % N), the group
     * ordered by key (Pier's pier.share.ordering=key; Kafka refuses it: not supported), against the
     * same topic read unordered. Each key count has a topic of its own, filled here.
     */
    private void keyedRows(Pass pass, Workloads w, BrokerProcess broker, String b) throws Exception {
        for (int keys : KEYED_KEY_COUNTS) {
            String ordered = "share-keyed-8c-1p-" + keys + "k";
            String unordered = "share-unordered-8c-1p-" + keys + "k";
            if (!ordered.contains(only) && !unordered.contains(only)) {
                continue;
            }
            String topic = "keyed-" + keys;
            w.createTopic(topic, 1);
            int filled = (int) w.produce(topic, 1, pass.p().shareRecords, 100, keys).records();
            measure(pass, broker, b, unordered, "Share consume, 8 consumers, 1 partition, " + keys
                    + " keys, unordered, explicit ACCEPT per record", null,
                    () -> w.shareVerdicts(topic, 8, filled, 0, AcknowledgeType.ACCEPT, Map.of()).throughput());
            measure(pass, broker, b, ordered, "Share consume, 8 consumers, 1 partition, " + keys
                    + " keys, ordered by key (Pier's pier.share.ordering=key), explicit ACCEPT per record", null,
                    () -> w.shareVerdicts(topic, 8, filled, 0, AcknowledgeType.ACCEPT,
                            Map.of("pier.share.ordering", "key")).throughput());
        }
    }

    /** Numbers the dead-letter topics of the share-dlq-reject runs. */
    private static final java.util.concurrent.atomic.AtomicInteger DLQ_SEQ = new java.util.concurrent.atomic.AtomicInteger();

    /** Put before the names of the topics of a broker's warm-up pass. */
    static final String WARMUP_TOPIC_PREFIX = "warm-";

    private void workloads(Pass pass, Workloads w, BrokerProcess broker, String b) throws Exception {
        Params p = pass.p();
        measure(pass, broker, b, "produce-100", "Produce 100 B records, acks=all, idempotent",
                () -> w.createTopic("produce-100", 1), () -> w.produce("produce-100", 1, p.produceSmall, 100));
        measure(pass, broker, b, "produce-1k", "Produce 1 KB records, acks=all, idempotent",
                () -> w.createTopic("produce-1k", 1), () -> w.produce("produce-1k", 1, p.produceLarge, 1024));
        txnRows(pass, w, broker, b);
        // Share runs read what the fill got acknowledged, so a failed send does not leave them waiting out the cap.
        long[] filled = {p.shareRecords, p.shareRecords};
        if (wantsShareSource()) {
            w.createTopic("src-1p", 1);
            filled[0] = w.produce("src-1p", 1, p.shareRecords, 100).records();
            w.createTopic("src-10p", 10);
            filled[1] = w.produce("src-10p", 10, p.shareRecords, 100).records();
            if (filled[0] < p.shareRecords || filled[1] < p.shareRecords) {
                log(String.format(Locale.ROOT, "  share source topics hold %,d and %,d of %,d records; share runs read those",
                        filled[0], filled[1], p.shareRecords));
            }
        }
        List<Double> firstRecord = new ArrayList<>();
        for (int partitions : new int[] {1, 10}) {
            for (int consumers : new int[] {1, 4, 16}) {
                for (boolean explicit : new boolean[] {true, false}) {
                    String key = "share-" + (explicit ? "explicit" : "implicit") + "-" + consumers + "c-" + partitions + "p";
                    String label = "Share consume, " + consumers + " consumer" + (consumers > 1 ? "s" : "") + ", "
                            + partitions + " partition" + (partitions > 1 ? "s" : "") + ", "
                            + (explicit ? "explicit ACCEPT per record" : "implicit acks");
                    measure(pass, broker, b, key, label, null, () -> {
                        Workloads.ConsumeRun run = w.share("src-" + partitions + "p", consumers, explicit,
                                (int) filled[partitions == 1 ? 0 : 1], 0);
                        firstRecord.add(run.firstRecordMs());
                        return run.throughput();
                    });
                }
            }
        }
        firstRecord.sort(Comparator.naturalOrder());
        if (!firstRecord.isEmpty()) {
            pass.results().add("share-first", "Share consumer: subscribe to first record (median of the runs above)",
                    "ms", false, b, firstRecord.get(firstRecord.size() / 2));
        }
        measure(pass, broker, b, "share-redeliver", "Share consume, 4 consumers, 1 partition, 10% RELEASEd once then ACCEPTed",
                null, () -> {
                    return w.share("src-1p", 4, true, (int) filled[0], 10).throughput();
                });
        // Issue 17: the same with Pier's release backoff on (Kafka refuses the group config: n/a), and
        // REJECT into a dead-letter topic (KIP-1191), whose record count is checked after the run.
        measure(pass, broker, b, "share-redeliver-backoff", "Share consume, 4 consumers, 1 partition, 10% RELEASEd once"
                + " then ACCEPTed, release backoff 20 ms (Pier's pier.share.release.backoff.initial.ms)", null,
                () -> w.shareVerdicts("src-1p", 4, (int) filled[0], 10, AcknowledgeType.RELEASE,
                        Map.of("pier.share.release.backoff.initial.ms", "20")).throughput());
        measure(pass, broker, b, "share-reject-dlq", "Share consume, 4 consumers, 1 partition, 10% REJECTed into a"
                + " dead-letter topic (KIP-1191, copy on), the rest ACCEPTed", null, () -> {
                    String dlq = w.createDeadLetterTopic("dlq-reject-" + DLQ_SEQ.incrementAndGet());
                    Workloads.Throughput rate = w.shareVerdicts("src-1p", 4, (int) filled[0], 10, AcknowledgeType.REJECT,
                            Map.of("errors.deadletterqueue.topic.name", dlq,
                                    "errors.deadletterqueue.copy.record.enable", "true")).throughput();
                    long expected = (filled[0] + 9) / 10;
                    long letters = w.recordsIn(dlq, expected, 30_000);
                    log(String.format(Locale.ROOT, "  %s: %,d dead letters for %,d rejected records%s", b, letters,
                            expected, letters == expected ? "" : "  <-- MISMATCH"));
                    return rate;
                });
        keyedRows(pass, w, broker, b);
        if (wantsGroupSource()) {
            // Its own topic, 10x the share runs' records: a settled group of 10 consumers drains 100,000
            // records in well under 100 ms, too short a window for a rate or a CPU reading.
            w.createTopic("grp-10p", 10);
            long groupFilled = w.produce("grp-10p", 10, p.groupRecords, 100).records();
            for (String protocol : GROUP_PROTOCOLS) {
                groupRows(pass, w, broker, b, protocol, (int) groupFilled);
            }
        }
        measure(pass, broker, b, "plain-fetch", "Plain consumer fetch (assign, no group), 10 partitions, "
                + PLAIN_FETCH_PASSES + " passes", null,
                () -> w.plainFetch("src-10p", 10, (int) filled[1], PLAIN_FETCH_PASSES));
        if (!pass.warmup() && kcat != null) {
            kcatRows(pass, w, broker, b);
        }
        for (int rate : p.latencyRates()) {
            for (Integer linger : pass.warmup() ? Arrays.asList((Integer) null) : Arrays.asList(null, 0)) {
                latencyRow(pass, w, b, rate, linger);
            }
        }
        securityRows(pass, w, broker, b);
    }

    /** The workloads of the security rows: each runs over every listener of {@link #SECURITY_PROTOCOLS}. */
    static final List<String> SECURITY_WORKLOADS = List.of("produce", "share");
    /** The listeners of the security rows, PLAINTEXT (the baseline) first. */
    static final List<String> SECURITY_PROTOCOLS = List.of(Security.PLAINTEXT, Security.SSL, Security.SASL_SSL);
    /** The unmeasured produce over each listener before the security rows: this fraction of the produce row's count. */
    static final int SECURITY_WARM_FRACTION = 4;
    /** {@code --only} with this selects every security row. */
    static final String SECURITY_SELECTOR = "security";

    /** {@code produce-tls}, {@code share-sasl-ssl}, {@code produce-plaintext} (the baseline), ... */
    static String securityKey(String workload, String protocol) {
        return workload + "-" + switch (protocol) {
            case Security.PLAINTEXT -> "plaintext";
            case Security.SSL -> "tls";
            case Security.SASL_SSL -> "sasl-ssl";
            default -> throw new IllegalArgumentException(protocol);
        };
    }

    /**
     * Whether a row runs and is recorded: its key contains {@code --only}'s substring, or it is a
     * security row that {@link #securitySelected} selects.
     */
    private boolean selected(String key) {
        return key.contains(only) || securitySelected(key);
    }

    /**
     * Security rows match {@code --only} as substrings too ({@code tls}: the SSL rows, {@code sasl}:
     * the SASL_SSL rows, {@code share-tls}: one row), and {@code security} selects them all; a
     * PLAINTEXT baseline row runs whenever a secured row of its workload does, so that every ratio
     * has its baseline from the same broker and round.
     */
    private boolean securitySelected(String key) {
        for (String workload : SECURITY_WORKLOADS) {
            for (String protocol : SECURITY_PROTOCOLS) {
                if (!securityKey(workload, protocol).equals(key)) {
                    continue;
                }
                if (only.equals(SECURITY_SELECTOR) || key.contains(only)) {
                    return true;
                }
                return protocol.equals(Security.PLAINTEXT) && SECURITY_PROTOCOLS.stream()
                        .filter(x -> !x.equals(Security.PLAINTEXT))
                        .anyMatch(x -> securityKey(workload, x).contains(only));
            }
        }
        return false;
    }

    /** Whether any security row runs, so that the brokers get their SSL and SASL_SSL listeners. */
    private boolean wantsSecurity() {
        return SECURITY_WORKLOADS.stream().anyMatch(
                wl -> SECURITY_PROTOCOLS.stream().anyMatch(p -> selected(securityKey(wl, p))));
    }

    /** Rows per security workload: same workload, each listener; their keys, for the report. */
    static List<String> securityKeys(String workload) {
        return SECURITY_PROTOCOLS.stream().map(p -> securityKey(workload, p)).toList();
    }

    /**
     * The security rows ({@code --only tls}, {@code --only sasl}, {@code --only security}): the
     * 100 B produce row and the 4-consumer, 1-partition explicit share row, each run over the
     * PLAINTEXT, SSL and SASL_SSL (PLAIN) listeners of the same broker one after the other, the
     * order rotating with the round, with the same client code and only the client's security
     * settings changed. The share runs read one 1-partition topic filled over PLAINTEXT first
     * (each run is a new share group). Their TLS cost is the secured row over the PLAINTEXT row,
     * on each broker; the report compares it between brokers.
     */
    private void securityRows(Pass pass, Workloads plain, BrokerProcess broker, String b) throws Exception {
        if (security == null) {
            return;
        }
        Params p = pass.p();
        int produceCount = securityRecords > 0 && !pass.warmup() ? securityRecords : p.produceSmall;
        int shareCount = securityRecords > 0 && !pass.warmup() ? securityRecords : p.shareRecords;
        List<String> order = new ArrayList<>(SECURITY_PROTOCOLS);
        Collections.rotate(order, -(pass.round() % order.size()));
        Map<String, Workloads> clients = new LinkedHashMap<>();
        try {
            for (String protocol : order) {
                if (SECURITY_WORKLOADS.stream().anyMatch(wl -> selected(securityKey(wl, protocol)))) {
                    clients.put(protocol, protocol.equals(Security.PLAINTEXT) ? plain
                            : new Workloads(broker.bootstrap(protocol), p.cap, broker::cpuNanos,
                                    security.clientSettings(protocol), plain.topicPrefix()));
                }
            }
            // Unmeasured first, over each listener that runs: with --only tls these are the broker's first
            // requests, and whichever row ran first would pay for its JIT warm-up (the TLS path included).
            if (!pass.warmup()) {
                for (Map.Entry<String, Workloads> e : clients.entrySet()) {
                    String topic = "sec-warm-" + e.getKey().toLowerCase(Locale.ROOT).replace('_', '-');
                    e.getValue().createTopic(topic, 1);
                    var unused = e.getValue().produce(topic, 1, produceCount / SECURITY_WARM_FRACTION, 100);
                }
            }
            for (String protocol : clients.keySet()) {
                Workloads w = clients.get(protocol);
                String key = securityKey("produce", protocol);
                String topic = "sec-" + key;
                measure(pass, broker, b, key, "Produce 100 B records, acks=all, idempotent, over "
                        + protocolLabel(protocol), () -> w.createTopic(topic, 1),
                        () -> w.produce(topic, 1, produceCount, 100));
            }
            if (SECURITY_PROTOCOLS.stream().noneMatch(x -> selected(securityKey("share", x)))) {
                return;
            }
            String source = "sec-src-1p";
            plain.createTopic(source, 1);
            long filled = plain.produce(source, 1, shareCount, 100).records();
            if (!pass.warmup()) {
                // One unmeasured read first, over the first secured listener that runs: the first share run on
                // a fresh broker was the slowest, whichever listener it used.
                String warm = clients.keySet().stream().filter(x -> !x.equals(Security.PLAINTEXT)).findFirst()
                        .orElse(Security.PLAINTEXT);
                try {
                    var unused = clients.get(warm).share(source, 4, true, (int) filled / 2, 0);
                } catch (Exception e) {
                    log("  unmeasured warm read of " + source + " over " + warm + " failed on " + b + ": " + rootCause(e));
                }
            }
            for (String protocol : clients.keySet()) {
                Workloads w = clients.get(protocol);
                measure(pass, broker, b, securityKey("share", protocol), "Share consume, 4 consumers, 1 partition, "
                        + "explicit ACCEPT per record, over " + protocolLabel(protocol), null,
                        () -> w.share(source, 4, true, (int) filled, 0).throughput());
            }
        } finally {
            for (Workloads w : clients.values()) {
                if (w != plain) {
                    w.close();
                }
            }
        }
    }

    static String protocolLabel(String protocol) {
        return switch (protocol) {
            case Security.PLAINTEXT -> "PLAINTEXT (the baseline of the TLS rows)";
            case Security.SSL -> "SSL (TLS, server certificate only)";
            case Security.SASL_SSL -> "SASL_SSL (SASL/PLAIN over TLS)";
            default -> protocol;
        };
    }

    /** Records per transaction of the transactional produce rows. */
    static final int[] TXN_SIZES = {100, 1_000};
    /** Records per transaction of the transactional fill of the read_committed / read_uncommitted share source. */
    static final int TXN_FILL_SIZE = 100;
    /** Consumers of the read_committed / read_uncommitted share rows (1 partition, explicit ACCEPT per record). */
    static final int TXN_SHARE_CONSUMERS = 4;
    /** The isolation levels of the transactional share rows, and their row keys. */
    static final List<String> ISOLATION_LEVELS = List.of("read_committed", "read_uncommitted");

    static String txnShareKey(String isolation) {
        return "txn-share-" + isolation.replace('_', '-');
    }

    /**
     * The transaction rows ({@code --only txn}): transactional produce of 100 B records in
     * transactions of 100 and of 1,000 records, each to a fresh 1-partition topic, with records/s,
     * MB/s and broker CPU per record; then a 1-partition topic filled by a transactional producer
     * (transactions of {@value #TXN_FILL_SIZE}, all committed, so both isolation levels deliver
     * the same records and the rows differ only by the broker's isolation) read by a share group
     * with {@code share.isolation.level=read_committed}, then by another with
     * {@code read_uncommitted} (the other way round in odd rounds). A broker that refuses the
     * group config gets "not supported" in that row (and the run goes on).
     */
    private void txnRows(Pass pass, Workloads w, BrokerProcess broker, String b) throws Exception {
        Params p = pass.p();
        for (int size : TXN_SIZES) {
            String key = "txn-produce-" + size;
            String topic = "txn-produce-" + size;
            String label = String.format(Locale.ROOT, "Transactional produce 100 B records, transactions of %,d records, "
                    + "one transactional producer, acks=all", size);
            Workloads.TxnRun[] run = new Workloads.TxnRun[1];
            Workloads.Throughput t = measure(pass, broker, b, key, label, () -> w.createTopic(topic, 1), () -> {
                run[0] = w.produceTransactional(topic, 1, p.produceSmall, 100, size);
                return run[0].throughput();
            }, false);
            if (!key.contains(only) || pass.warmup()) {
                continue;
            }
            String mbs = "↳ MB/s of record values";
            String commit = "↳ commitTransaction, mean (from the call to its answer; it flushes the sends first)";
            if (t == null) {
                pass.results().addUnavailable(key + "-mbs", mbs, "MB/s", true, b);
                pass.results().addUnavailable(key + "-commit", commit, "ms", false, b);
            } else {
                pass.results().add(key + "-mbs", mbs, "MB/s", true, b, t.recordsPerSec() * 100 / 1e6);
                pass.results().add(key + "-commit", commit, "ms", false, b, run[0].commitMeanMs());
            }
        }
        if (ISOLATION_LEVELS.stream().noneMatch(l -> txnShareKey(l).contains(only))) {
            return;
        }
        String topic = "txn-src-1p";
        long filled;
        try {
            w.createTopic(topic, 1);
            filled = w.produceTransactional(topic, 1, p.shareRecords, 100, TXN_FILL_SIZE).throughput().records();
        } catch (Exception e) {
            // Without its source neither share row can run: both n/a, and the pass goes on.
            filled = -1;
            log("  " + (pass.warmup() ? "(warm-up) " : "") + "transactional fill of " + topic + " failed on " + b + ": "
                    + rootCause(e));
        }
        // One unmeasured read of the topic first: the run just after the fill paid for the broker's
        // warm-up (its flushes, its JIT) and was slower whichever level it had, up to 2x.
        if (filled > 0 && !pass.warmup()) {
            try {
                w.share(topic, TXN_SHARE_CONSUMERS, true, (int) filled, 0, null);
            } catch (Exception e) {
                log("  unmeasured warm read of " + topic + " failed on " + b + ": " + rootCause(e));
            }
        }
        // The two levels read the same topic one after the other; which goes first alternates with the round.
        List<String> levels = new ArrayList<>(ISOLATION_LEVELS);
        if (pass.round() % 2 == 1) {
            Collections.reverse(levels);
        }
        for (String isolation : levels) {
            String label = String.format(Locale.ROOT, "Share consume of transactionally produced records (all committed, "
                    + "transactions of %,d), share.isolation.level=%s, %d consumers, 1 partition, explicit ACCEPT per "
                    + "record", TXN_FILL_SIZE, isolation, TXN_SHARE_CONSUMERS);
            long target = filled;
            measure(pass, broker, b, txnShareKey(isolation), label, null, () -> {
                if (target < 0) {
                    throw new IllegalStateException("no source topic: its transactional fill failed");
                }
                return w.share(topic, TXN_SHARE_CONSUMERS, true, (int) target, 0, isolation).throughput();
            });
        }
    }

    /**
     * Consumer-group consumption of the 10-partition group source with one {@code group.protocol}:
     * a row per consumer count, then the wait from subscribe to the first record of the
     * one-consumer run (the others wait for their group to settle first, see
     * {@link Workloads#group}). A broker that refuses the protocol (Pier before it serves
     * ConsumerGroupHeartbeat) gets {@code n/a} in every row, the first-record row included, and
     * the other rows run on.
     */
    private void groupRows(Pass pass, Workloads w, BrokerProcess broker, String b, String protocol, int records) {
        List<Double> firstRecord = new ArrayList<>();
        for (int consumers : GROUP_CONSUMERS) {
            String key = groupKey(protocol, consumers);
            if (!key.contains(only)) {
                continue;
            }
            String label = "Consumer group, group.protocol=" + protocol + ", " + consumers + " consumer"
                    + (consumers > 1 ? "s" : "") + ", 10 partitions, commitSync after every poll";
            measure(pass, broker, b, key, label, null, () -> {
                Workloads.ConsumeRun run = w.group("grp-10p", 10, protocol, consumers, records);
                if (consumers == 1) {
                    firstRecord.add(run.firstRecordMs());
                }
                return run.throughput();
            });
        }
        if (!groupKey(protocol, 1).contains(only) || pass.warmup()) {
            return;
        }
        String key = "group-" + protocol + "-first";
        // group.initial.rebalance.delay.ms is left at its default (3 s on both brokers): a new classic group
        // waits that long for more members before its first assignment, which is what this row compares.
        String label = "Consumer group, group.protocol=" + protocol + ": subscribe to first record (the 1-consumer "
                + "run; " + (protocol.equals("classic")
                        ? "includes the brokers' default 3 s group.initial.rebalance.delay.ms"
                        : "that delay is for classic groups only") + ")";
        if (firstRecord.isEmpty()) {
            pass.results().addUnavailable(key, label, "ms", false, b);
            return;
        }
        pass.results().add(key, label, "ms", false, b, firstRecord.get(0));
    }

    static String groupKey(String protocol, int consumers) {
        return "group-" + protocol + "-" + consumers + "c-10p";
    }

    /**
     * The share and plain-fetch rows read topics that are filled first; skip the filling when none
     * of them runs.
     */
    private boolean wantsShareSource() {
        List<String> readers = new ArrayList<>(List.of("share-redeliver", "share-redeliver-backoff", "share-reject-dlq", "plain-fetch"));
        for (String mode : List.of("explicit", "implicit")) {
            for (int c : new int[] {1, 4, 16}) {
                for (int partitions : new int[] {1, 10}) {
                    readers.add("share-" + mode + "-" + c + "c-" + partitions + "p");
                }
            }
        }
        return readers.stream().anyMatch(k -> k.contains(only));
    }

    /** Whether a consumer-group row runs, so that its own (larger) source topic is filled. */
    private boolean wantsGroupSource() {
        for (String protocol : GROUP_PROTOCOLS) {
            for (int c : GROUP_CONSUMERS) {
                if (groupKey(protocol, c).contains(only)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** librdkafka through kcat: produce N 100 B records from a file, then consume them from the beginning. */
    private void kcatRows(Pass pass, Workloads w, BrokerProcess broker, String b) throws Exception {
        Params p = pass.p();
        if (!"kcat-produce".contains(only) && !"kcat-consume".contains(only)) {
            return;
        }
        Path file = Kcat.recordsFile(work, p.produceSmall, 100);
        Path dir = broker.workDir;
        String topic = "kcat-100";
        w.createTopic(topic, 1);
        // Runs even with --only kcat-consume, which needs its records (then it is not recorded).
        measure(pass, broker, b, "kcat-produce", "kcat (librdkafka) produce 100 B records from a file, acks=all, idempotent",
                null, () -> kcat.produce(broker.bootstrap(), topic, file, p.produceSmall,
                        dir.resolve(b + "-kcat-produce.err")), true);
        measure(pass, broker, b, "kcat-consume", "kcat (librdkafka) consume them from the beginning to the end",
                null, () -> {
                    Workloads.Throughput t = kcat.consume(broker.bootstrap(), topic, dir.resolve(b + "-kcat-consume.err"));
                    if (t.records() != p.produceSmall) {
                        log("  kcat consumed " + t.records() + " of " + p.produceSmall + " records");
                    }
                    return t;
                });
    }

    private void latencyRow(Pass pass, Workloads w, String b, int rate, Integer linger) {
        String key = "lat-" + rate + (linger == null ? "" : "-linger" + linger);
        if (!key.contains(only)) {
            return;
        }
        try {
            Workloads.Latency lat = w.latency(key, rate, pass.p().latencySeconds(), linger);
            String what = String.format(Locale.ROOT, "Produce to confirmed ACCEPT at %,d rec/s, %s, ", rate,
                    linger == null ? "client defaults" : "linger.ms=" + linger);
            if (!pass.warmup()) {
                pass.results().add(key + "-p50", what + "p50", "ms", false, b, lat.p50());
                pass.results().add(key + "-p99", what + "p99", "ms", false, b, lat.p99());
                pass.results().add(key + "-p999", what + "p99.9", "ms", false, b, lat.p999());
                String delivered = String.format(Locale.ROOT, "Produce to delivery (returned by poll) at %,d rec/s, %s, ",
                        rate, linger == null ? "client defaults" : "linger.ms=" + linger);
                pass.results().add(key + "-delivered-p50", delivered + "p50", "ms", false, b, lat.deliveredP50());
                pass.results().add(key + "-delivered-p99", delivered + "p99", "ms", false, b, lat.deliveredP99());
            }
            log(String.format(Locale.ROOT, "  %s%-22s p50 %.1f p99 %.1f p99.9 %.1f ms (%d samples); delivered p50 %.1f p99 %.1f ms",
                    pass.warmup() ? "(warm-up) " : "", key, lat.p50(), lat.p99(), lat.p999(), lat.samples(),
                    lat.deliveredP50(), lat.deliveredP99()));
        } catch (Exception e) {
            log("  " + key + " FAILED: " + e);
        }
    }

    /** Below this many clock ticks of broker CPU a workload's per-record figure is left out (±20% at 5). */
    static final int MIN_CPU_TICKS = 5;
    /**
     * Plain fetch reads its topic this many times, a new consumer each time: one pass of the full
     * run's 100,000 records takes a few tens of milliseconds, too short for a rate or a CPU reading
     * in clock ticks.
     */
    static final int PLAIN_FETCH_PASSES = 10;

    /** The consumer-group rows' {@code group.protocol} values: the classic protocol and KIP-848's. */
    static final List<String> GROUP_PROTOCOLS = List.of("classic", "consumer");
    /** The consumer-group rows' consumer counts, all on the 10-partition source. */
    static final int[] GROUP_CONSUMERS = {1, 4, 10};

    interface Setup {
        void run() throws Exception;
    }

    interface Measured {
        Workloads.Throughput run() throws Exception;
    }

    private void measure(Pass pass, BrokerProcess broker, String b, String key, String label, Setup setup, Measured m) {
        measure(pass, broker, b, key, label, setup, m, false);
    }

    /**
     * One throughput row and its broker-CPU-per-record row: the broker's CPU time (all threads,
     * user + system) over the records the workload moved, taken over the same window as its rate:
     * from the first record received to the last for share, consumer-group and plain-fetch runs
     * (which read it themselves), and from just before to just after the run otherwise.
     * {@code setup} (creating the topic) runs before the CPU clock starts. A run that throws (the
     * broker refused what the client asked, say) puts {@code n/a} in both rows and its error in the
     * run log, and the bench goes on with the next row; one that the broker refused a setting for
     * ({@link Workloads.Unsupported}) puts "not supported" in both rows, with the reason under the
     * table. Returns the run's figures, null when it did not run or failed.
     */
    private Workloads.Throughput measure(Pass pass, BrokerProcess broker, String b, String key, String label,
            Setup setup, Measured m, boolean always) {
        if (!selected(key) && !always) {
            return null;
        }
        Workloads.Throughput t;
        double v;
        double cpuPerRecordMicros = Double.NaN;
        try {
            if (setup != null) {
                setup.run();
            }
            long cpu0 = broker.cpuNanos();
            t = m.run();
            long cpu1 = broker.cpuNanos();
            v = t.recordsPerSec();
            long cpu = t.brokerCpuNanos() >= 0 ? t.brokerCpuNanos() : cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1;
            long tick = 1_000_000_000L / BrokerProcess.clockTicksPerSecond();
            if (cpu >= MIN_CPU_TICKS * tick && t.records() > 0) {
                cpuPerRecordMicros = cpu / 1e3 / t.records();
            } else if (cpu >= 0) {
                log(String.format(Locale.ROOT, "  %s: %d ms of broker CPU, under %d clock ticks: too coarse to report",
                        key, cpu / 1_000_000, MIN_CPU_TICKS));
            }
        } catch (Workloads.Unsupported e) {
            if (selected(key) && !pass.warmup()) {
                pass.results().addUnsupported(key, label, "rec/s", true, b, e.getMessage());
                pass.results().addUnsupported(key + "-cpu", "↳ broker CPU per record", "µs", false, b, "");
            }
            log("  " + (pass.warmup() ? "(warm-up) " : "") + key + " not supported on " + b + ": " + e.getMessage());
            return null;
        } catch (Exception e) {
            if (selected(key) && !pass.warmup()) {
                pass.results().addUnavailable(key, label, "rec/s", true, b);
                pass.results().addUnavailable(key + "-cpu", "↳ broker CPU per record", "µs", false, b);
            }
            log("  " + (pass.warmup() ? "(warm-up) " : "") + key + " n/a on " + b + ", the run failed: " + rootCause(e));
            return null;
        }
        if (!selected(key)) {
            return t; // ran only to fill a topic another selected row reads
        }
        if (!pass.warmup()) {
            pass.results().add(key, label, "rec/s", true, b, v);
            pass.results().add(key + "-cpu", "↳ broker CPU per record", "µs", false, b, cpuPerRecordMicros);
        }
        log(String.format(Locale.ROOT, "  %s%-28s %,12.0f rec/s  %8.2f µs broker CPU/rec",
                pass.warmup() ? "(warm-up) " : "", key, v, cpuPerRecordMicros));
        return t;
    }

    /**
     * The failure and its innermost cause, which says what the broker lacked (the client wraps
     * "The node does not support CONSUMER_GROUP_HEARTBEAT" in an advice to use the classic protocol).
     */
    static String rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String what = e.getClass().getSimpleName() + ": " + e.getMessage();
        return t == e ? what : what + " (cause: " + t.getClass().getSimpleName() + ": " + t.getMessage() + ")";
    }

    private String jfrSection() throws IOException {
        StringBuilder sb = new StringBuilder();
        for (Path f : jfrFiles) {
            if (Files.exists(f)) {
                sb.append("### ").append(f.getFileName()).append(" (last round, whole broker lifetime)\n\n");
                sb.append(JfrTop.summarize(f, 15));
            }
        }
        return sb.toString();
    }

    static String runJmh(boolean quick) {
        try {
            OptionsBuilder ob = new OptionsBuilder();
            ob.include(SharePartitionBench.class.getName() + ".*").forks(1).jvmArgs("-Xms1g", "-Xmx1g")
                    .warmupIterations(quick ? 1 : 3).warmupTime(TimeValue.milliseconds(quick ? 300 : 1000))
                    .measurementIterations(quick ? 2 : 5).measurementTime(TimeValue.milliseconds(quick ? 300 : 1000));
            Collection<RunResult> rr = new Runner(ob.build()).run();
            StringBuilder sb = new StringBuilder();
            sb.append("| Benchmark | Score | Error (99.9%) | Unit | Per second |\n|---|---:|---:|---|---:|\n");
            for (RunResult r : rr) {
                String name = r.getParams().getBenchmark();
                var res = r.getPrimaryResult();
                boolean perRecord = name.contains("acquireAccept");
                sb.append(String.format(Locale.ROOT, "| `%s` | %.1f | %.1f | %s | %s |\n",
                        name.substring(name.lastIndexOf('.') + 1), res.getScore(), res.getScoreError(),
                        res.getScoreUnit() + (perRecord ? " (per record)" : " (per call)"),
                        String.format(Locale.ROOT, "%,.0f %s", 1e9 / res.getScore(), perRecord ? "records" : "calls")));
            }
            return sb.toString();
        } catch (Exception e) {
            log("JMH failed: " + e);
            return "JMH failed: " + e + "\n";
        }
    }

    static void log(String s) {
        System.err.println("[bench] " + s);
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }

    static String machine() {
        long memKb = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    memKb = Long.parseLong(line.replaceAll("\\D+", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            memKb = 0;
        }
        return String.format(Locale.ROOT, "%d cores, %.0f GiB RAM, %s %s (%s), JDK %s (%s)",
                Runtime.getRuntime().availableProcessors(), memKb / 1024.0 / 1024.0,
                System.getProperty("os.name"), System.getProperty("os.version").replaceAll("-.*", ""),
                System.getProperty("os.arch"), System.getProperty("java.version"), System.getProperty("java.vm.name"));
    }

    static String now() {
        return ZonedDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE);
    }
}
