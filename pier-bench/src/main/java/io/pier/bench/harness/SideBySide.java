package io.pier.bench.harness;

import io.pier.bench.jmh.SharePartitionBench;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
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

    /** Counts and durations of one run; {@code --quick} shrinks them. */
    record Params(int rounds, int produceSmall, int produceLarge, int shareRecords, int latencyRate,
            int latencySeconds, Duration cap, boolean quick) {
        static Params fullRun() {
            return new Params(3, 200_000, 50_000, 100_000, 1_000, 8, Duration.ofSeconds(60), false);
        }

        static Params quickRun() {
            return new Params(1, 40_000, 10_000, 10_000, 500, 3, Duration.ofSeconds(30), true);
        }
    }

    private final Params params;
    private final String pierClasspath;
    private final Path kafkaLib;
    private final Path work;
    private final List<String> jvmFlags;
    private final boolean jfr;
    private final Results results = new Results();
    private final List<Path> jfrFiles = new ArrayList<>();
    private volatile BrokerProcess current;
    String only = "";
    List<String> brokers = List.of(DURABLE, NONE, KAFKA);

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
        String only = "";
        List<String> brokers = List.of(DURABLE, NONE, KAFKA);
        Integer rounds = null;
        Integer records = null;
        String pierCp = null;
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
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--pier-cp" -> pierCp = args[++i];
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
        Params p = quick ? Params.quickRun() : Params.fullRun();
        if (rounds != null || records != null) {
            p = new Params(rounds != null ? rounds : p.rounds, p.produceSmall, p.produceLarge,
                    records != null ? records : p.shareRecords, p.latencyRate, p.latencySeconds, p.cap, p.quick);
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
        bench.brokers = brokers;
        bench.run();
        String jmhSection = jmh ? runJmh(quick) : "";
        String jfrSection = bench.jfrSection();
        long minutes = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        String md = new Report(bench.results, p, flags, command, minutes, jmhSection, jfrSection).markdown();
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
        for (int r = 0; r < params.rounds; r++) {
            for (int i = 0; i < brokers.size(); i++) {
                String b = brokers.get((i + r) % brokers.size());
                boolean record = jfr && r == params.rounds - 1 && !b.equals(KAFKA);
                runBroker(b, r, record);
            }
        }
    }

    private BrokerProcess create(String broker, Path dir) throws IOException {
        return switch (broker) {
            case DURABLE -> new PierBroker(broker, jvmFlags, dir, pierClasspath, "durable");
            case NONE -> new PierBroker(broker, jvmFlags, dir, pierClasspath, "none");
            default -> new KafkaBroker(broker, jvmFlags, dir, kafkaLib);
        };
    }

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
            try (RssSampler rss = new RssSampler(broker.pid());
                    Workloads w = new Workloads(broker.bootstrap(), params.cap)) {
                workloads(w, b);
                results.add("rss-load", "Resident memory, peak under load", "MiB", false, b, rss.peakMiB());
            }
        }
    }

    private void workloads(Workloads w, String b) throws Exception {
        measure(b, "produce-100", "Produce 100 B records, acks=all, idempotent", "rec/s", () -> {
            w.createTopic("produce-100", 1);
            return w.produce("produce-100", 1, params.produceSmall, 100);
        });
        measure(b, "produce-1k", "Produce 1 KB records, acks=all, idempotent", "rec/s", () -> {
            w.createTopic("produce-1k", 1);
            return w.produce("produce-1k", 1, params.produceLarge, 1024);
        });
        w.createTopic("src-1p", 1);
        w.produce("src-1p", 1, params.shareRecords, 100);
        w.createTopic("src-10p", 10);
        w.produce("src-10p", 10, params.shareRecords, 100);
        List<Double> firstRecord = new ArrayList<>();
        for (int partitions : new int[] {1, 10}) {
            for (int consumers : new int[] {1, 4, 16}) {
                for (boolean explicit : new boolean[] {true, false}) {
                    String key = "share-" + (explicit ? "explicit" : "implicit") + "-" + consumers + "c-" + partitions + "p";
                    String label = "Share consume, " + consumers + " consumer" + (consumers > 1 ? "s" : "") + ", "
                            + partitions + " partition" + (partitions > 1 ? "s" : "") + ", "
                            + (explicit ? "explicit ACCEPT per record" : "implicit acks");
                    measure(b, key, label, "rec/s", () -> {
                        Workloads.ShareRun run = w.share("src-" + partitions + "p", consumers, explicit, params.shareRecords, 0);
                        firstRecord.add(run.firstRecordMs());
                        return run.recordsPerSec();
                    });
                }
            }
        }
        firstRecord.sort(Comparator.naturalOrder());
        if (!firstRecord.isEmpty()) {
            results.add("share-first", "Share consumer: subscribe to first record (median of the runs above)",
                    "ms", false, b, firstRecord.get(firstRecord.size() / 2));
        }
        measure(b, "share-redeliver", "Share consume, 4 consumers, 1 partition, 10% RELEASEd once then ACCEPTed",
                "rec/s", () -> w.share("src-1p", 4, true, params.shareRecords, 10).recordsPerSec());
        measure(b, "plain-fetch", "Plain consumer fetch (assign, no group), 10 partitions", "rec/s",
                () -> w.plainFetch("src-10p", 10, params.shareRecords));
        if (!"lat".contains(only)) {
            return;
        }
        try {
            Workloads.Latency lat = w.latency("latency", params.latencyRate, params.latencySeconds);
            String what = "Produce to confirmed ACCEPT at " + params.latencyRate + " rec/s, ";
            results.add("lat-p50", what + "p50", "ms", false, b, lat.p50());
            results.add("lat-p99", what + "p99", "ms", false, b, lat.p99());
            results.add("lat-p999", what + "p99.9", "ms", false, b, lat.p999());
            log(String.format(Locale.ROOT, "  latency p50 %.1f p99 %.1f p99.9 %.1f ms (%d samples)",
                    lat.p50(), lat.p99(), lat.p999(), lat.samples()));
        } catch (Exception e) {
            log("  latency FAILED: " + e);
        }
    }

    interface Measured {
        double run() throws Exception;
    }

    private void measure(String b, String key, String label, String unit, Measured m) {
        if (!key.contains(only)) {
            return;
        }
        double v;
        try {
            v = m.run();
        } catch (Exception e) {
            log("  " + key + " FAILED: " + e);
            v = Double.NaN;
        }
        results.add(key, label, unit, true, b, v);
        log(String.format(Locale.ROOT, "  %-28s %,12.0f %s", key, v, unit));
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
