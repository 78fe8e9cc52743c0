package io.pier.bench;

import io.pier.it.share.ScrapedMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Scenario S43 of the reliability campaign, the backlog soak: the driver of
 * {@code bench/backlog-soak.sh}, against a broker started elsewhere (never part of the build).
 *
 * <ol>
 *   <li>One idempotent {@code acks=all} producer per partition writes the backlog: records of
 *       4 KiB, each value carrying its partition, its sequence number in that partition and filler
 *       that follows from the sequence, so any delivered value can be checked byte for byte and
 *       matched with the offset its producer was told.</li>
 *   <li>ONE slow share consumer (explicit acknowledgement) holds what each poll gives it for a
 *       fixed time (the records stay ACQUIRED meanwhile), then ACCEPTs all of it and confirms with
 *       {@code commitSync}. The time is chosen so that it gets through about a third of the
 *       backlog in the minutes given. The group's in-flight cap
 *       ({@code share.partition.max.record.locks}) is set to 500 and the consumer asks for the cap
 *       times the partitions in each poll, so the cap, not the consumer, is what bounds the
 *       records held.</li>
 *   <li>Every 10 s a sample: the broker's resident memory and its live heap (a class histogram,
 *       which runs a full GC first); {@code pier_share_lag} against its truth, high watermark
 *       (Admin ListOffsets) minus share-partition start offset (Admin listShareGroupOffsets),
 *       once while the consumer runs (they may differ by acknowledgements landing in between:
 *       the largest difference is reported) and once with the consumer held where it has no
 *       acknowledgement in flight, after a metrics snapshot has been taken: then the metric,
 *       Admin's own lag (KIP-1226) and the clients' count (records acknowledged to the producer
 *       less the consumer's confirmed ACCEPTs from offset 0 on) must all equal it;
 *       and the records the consumer's member holds ACQUIRED, as the broker counts them, against
 *       the cap times the partitions (a partition's window may pass the cap by less than one log
 *       batch: batch_optimized acquisition, Kafka's default, takes the last log batch whole).</li>
 *   <li>At the end: every delivered record is one its producer had acknowledged, at that offset,
 *       byte for byte; no record is delivered again after its ACCEPT was confirmed (I5); every
 *       delivery count is 1 (no faults, so any redelivery is reported); I1: every acknowledged
 *       record is either ACCEPTed by the consumer, or still in the log at or past the group's start
 *       offset (read back, byte for byte); memory: the largest resident and heap figures, and
 *       whether the heap grew from the first third of the consumer's samples to the last.</li>
 * </ol>
 * Prints a line per sample and a final summary line starting {@code BacklogSoak:}; exits 1 if a
 * check failed.
 *
 * <pre>bench/testkit-main.sh io.pier.bench.BacklogSoak BOOTSTRAP METRICS_PORT BROKER_PID BACKLOG_MIB MINUTES
 *     PARTITIONS SNAPSHOT_INTERVAL_MS</pre>
 */
public final class BacklogSoak {
    static {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }

    private static final String TOPIC = "backlog-soak";
    private static final String GROUP = "backlog-soak-group";
    private static final int RECORD_BYTES = 4096;
    private static final int HEADER_BYTES = 16;
    private static final int FILLER_BYTES = RECORD_BYTES - HEADER_BYTES;
    private static final int MAGIC = 0x53343321; // "S43!"
    /** Twice the filler block: the filler of sequence s is FILLER[s % FILLER_BYTES, + FILLER_BYTES). */
    private static final byte[] FILLER = filler();
    /** The group's in-flight cap: low enough that a consumer asking for more is held by it. */
    private static final int LOCKS = 500;
    /** Producer batches of 64 KiB: a log batch holds at most 16 records of 4 KiB (15 with their overhead). */
    private static final int BATCH_BYTES = 64 * 1024;
    private static final int MAX_BATCH_RECORDS = BATCH_BYTES / RECORD_BYTES;
    private static final Duration SAMPLE_EVERY = Duration.ofSeconds(10);
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
    private static final int EXAMPLES = 5;

    private final String bootstrap;
    private final int metricsPort;
    private final long brokerPid;
    private final int partitions;
    private final int perPartition;
    private final long snapshotMs;
    private final Admin admin;
    /** Per partition, per sequence: the offset the producer was told, -1 if not acknowledged. */
    private final long[][] ackedOffset;
    /** Per partition: one past the highest offset acknowledged to the producer. */
    private final long[] ackedEnd;
    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());
    private final List<String> examples = Collections.synchronizedList(new ArrayList<>());
    private long maxRssMiB;
    private long maxHeapMiB;
    private final List<Long> consumeHeapsMiB = new ArrayList<>();
    private long lost;
    private boolean heapGrew;

    private BacklogSoak(String bootstrap, int metricsPort, long brokerPid, long backlogMiB, int partitions,
            long snapshotMs) {
        this.bootstrap = bootstrap;
        this.metricsPort = metricsPort;
        this.brokerPid = brokerPid;
        this.partitions = partitions;
        this.perPartition = Math.toIntExact(backlogMiB * (1L << 20) / RECORD_BYTES / partitions);
        this.snapshotMs = snapshotMs;
        this.admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
        this.ackedOffset = new long[partitions][perPartition];
        this.ackedEnd = new long[partitions];
        for (long[] a : ackedOffset) {
            Arrays.fill(a, -1);
        }
    }

    public static void main(String[] args) throws Exception {
        BacklogSoak soak = new BacklogSoak(args[0], Integer.parseInt(args[1]), Long.parseLong(args[2]),
                Long.parseLong(args[3]), Integer.parseInt(args[5]), Long.parseLong(args[6]));
        boolean ok;
        try {
            ok = soak.run(Duration.ofMinutes(Long.parseLong(args[4])));
        } finally {
            soak.admin.close();
        }
        System.exit(ok ? 0 : 1);
    }

    private boolean run(Duration consumeFor) throws Exception {
        long startNanos = System.nanoTime();
        memory("start-up");
        int cap = setUp();
        long acked = produce();
        for (int p = 0; p < partitions; p++) {
            ackedEnd[p] = Arrays.stream(ackedOffset[p]).max().orElse(-1) + 1;
        }
        memory("backlog written");

        long total = (long) perPartition * partitions;
        // The consumer gets cap records per partition per poll (the cap holds it) and holds them
        // for a fixed time: that time makes its rate about a third of the backlog over the minutes given.
        double rate = total / 3.0 / consumeFor.toSeconds();
        long sleepMs = Math.max(200, Math.min(10_000, Math.round((double) cap * partitions * 1000 / rate)));
        SlowConsumer consumer = new SlowConsumer(cap, sleepMs, System.nanoTime() + consumeFor.toNanos());
        System.out.printf(Locale.ROOT, "[backlog-soak] one share consumer, explicit ACCEPT, up to %d records a poll"
                + " (cap %d x %d partitions), each poll's held %d ms before its ACCEPTs; for %d min%n",
                cap * partitions, cap, partitions, sleepMs, consumeFor.toMinutes());
        Thread thread = new Thread(consumer, "slow-share-consumer");
        long consumeStart = System.nanoTime();
        thread.start();
        Samples samples = new Samples(cap);
        long next = consumeStart + SAMPLE_EVERY.toNanos();
        while (thread.isAlive()) {
            long waitMs = TimeUnit.NANOSECONDS.toMillis(next - System.nanoTime());
            thread.join(Math.max(1, waitMs));
            if (thread.isAlive() && System.nanoTime() >= next) {
                samples.take(consumer, (System.nanoTime() - consumeStart) / 1_000_000_000L);
                next += SAMPLE_EVERY.toNanos();
            }
        }
        if (consumer.failure != null) {
            problems.add("the consumer failed: " + consumer.failure);
        }
        // The consumer is gone (its acquired records released): a last quiet comparison, then I1.
        int mismatchedBefore = samples.quietMismatches;
        Truth last = samples.quiet(consumer, "after the consumer closed");
        long lastLag = 0;
        for (int p = 0; p < partitions; p++) {
            lastLag += last.lag(p);
        }
        System.out.printf(Locale.ROOT, "[backlog-soak] consumer closed: lag (hwm - spso) %,d (start offsets %s)%s%n",
                lastLag, Arrays.toString(last.spso()), samples.quietMismatches == mismatchedBefore
                        ? " = pier_share_lag = Admin's = clients'" : ", not all equal (see PROBLEM)");
        memory("consumer closed");
        long pending = checkNothingLost(consumer, last);
        samples.report();
        reportConsumer(consumer);
        reportMemory();
        long consumeSecs = Math.max(1, (System.nanoTime() - consumeStart) / 1_000_000_000L);
        synchronized (examples) {
            examples.stream().limit(4L * EXAMPLES).forEach(e -> System.out.println("[backlog-soak]   e.g. " + e));
        }
        synchronized (problems) {
            problems.forEach(p -> System.out.println("[backlog-soak] PROBLEM: " + p));
        }
        System.out.printf(Locale.ROOT, "BacklogSoak: %s; backlog %,d records of %d B (%,d MiB) on %d partitions,"
                + " %,d acknowledged; %,d ACCEPT confirmed in %d s (%.0f rec/s), %,d still in the log past the"
                + " start offset, lost %d; redeliveries %d, delivery count not 1: %d, I5 violations %d; lag:"
                + " %d quiet samples, %d mismatched, moving max |diff| %,d; acquired max %,d (cap x partitions"
                + " %,d), window max %,d; resident max %,d MiB, heap max %,d MiB%s; %d s in all%n",
                problems.isEmpty() ? "OK" : "FAIL (" + problems.size() + " problems)", total, RECORD_BYTES,
                total * RECORD_BYTES >> 20, partitions, acked, consumer.confirmedCount.get(), consumeSecs,
                consumer.confirmedCount.get() / (double) consumeSecs, pending, lost,
                consumer.redeliveries.get(), consumer.countNotOne.get(), consumer.i5.get(), samples.quietSamples,
                samples.quietMismatches, samples.movingMaxDiff, samples.maxAcquired, (long) cap * partitions,
                samples.maxWindow, maxRssMiB, maxHeapMiB, heapGrew ? " (GREW)" : "",
                (System.nanoTime() - startNanos) / 1_000_000_000L);
        return problems.isEmpty();
    }

    /** Creates the topic, sets the group's configs and returns the in-flight cap the broker reports. */
    private int setUp() throws Exception {
        admin.createTopics(List.of(new NewTopic(TOPIC, partitions, (short) 1))).all()
                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, GROUP);
        admin.incrementalAlterConfigs(Map.of(group, List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("share.partition.max.record.locks", String.valueOf(LOCKS)),
                        AlterConfigOp.OpType.SET)))).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        // The cap the checks hold the broker to is the one it reports, not the one asked for.
        ConfigEntry entry = admin.describeConfigs(List.of(group)).all()
                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(group)
                .get("share.partition.max.record.locks");
        if (entry == null) {
            throw new IllegalStateException("the broker reports no share.partition.max.record.locks for " + GROUP);
        }
        return Integer.parseInt(entry.value());
    }

    /** Writes the backlog, one idempotent producer per partition; returns the records acknowledged. */
    private long produce() throws Exception {
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int p = 0; p < partitions; p++) {
            int partition = p;
            Thread t = new Thread(() -> {
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(),
                        new ByteArraySerializer(), new ByteArraySerializer())) {
                    for (int seq = 0; seq < perPartition; seq++) {
                        int s = seq;
                        // Outcomes are counted by the callback; close() waits for every one of them.
                        var unused = producer.send(new ProducerRecord<>(TOPIC, partition, null, value(partition, s)),
                                (md, e) -> {
                                    if (e == null) {
                                        ackedOffset[partition][s] = md.offset();
                                        acked.incrementAndGet();
                                    } else {
                                        failed.incrementAndGet();
                                        example("producer " + partition + " seq " + s + " failed: " + e);
                                    }
                                });
                    }
                }
            }, "backlog-producer-" + p);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            while (t.isAlive()) {
                t.join(SAMPLE_EVERY.toMillis());
                if (t.isAlive()) {
                    long rss = rssMiB();
                    maxRssMiB = Math.max(maxRssMiB, rss);
                    System.out.printf(Locale.ROOT, "[backlog-soak] producing: %,d of %,d acknowledged | resident %,d"
                            + " MiB%n", acked.get(), (long) perPartition * partitions, rss);
                }
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "[backlog-soak] backlog: %,d records acknowledged (%,d MiB, %.0f MiB/s), %d"
                + " failed, %d partitions, %.0f s%n", acked.get(), acked.get() * RECORD_BYTES >> 20,
                acked.get() * (double) RECORD_BYTES / (1 << 20) / secs, failed.get(), partitions, secs);
        if (failed.get() > 0) {
            problems.add(failed.get() + " backlog records were not acknowledged (no faults: none should fail)");
        }
        return acked.get();
    }

    private Properties producerProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("batch.size", String.valueOf(BATCH_BYTES));
        p.put("linger.ms", "5");
        p.put("compression.type", "none");
        p.put("buffer.memory", String.valueOf(32L << 20));
        p.put("delivery.timeout.ms", "300000");
        p.put("request.timeout.ms", "60000");
        return p;
    }

    /** The ONE slow share consumer; its checks of what it is given run on its own thread. */
    private final class SlowConsumer implements Runnable {
        private final int cap;
        private final long sleepMs;
        private final long endNanos;
        /**
         * Held by the consumer while it polls and while it acknowledges: a quiet sample takes it to
         * hold the consumer where no acknowledgement is in flight.
         */
        final ReentrantLock gate = new ReentrantLock(true);
        private final BitSet[] delivered = new BitSet[partitions];
        private final BitSet[] confirmed = new BitSet[partitions];
        private final BitSet[] unconfirmed = new BitSet[partitions];
        final AtomicLong confirmedCount = new AtomicLong();
        final AtomicLong deliveries = new AtomicLong();
        final AtomicLong redeliveries = new AtomicLong();
        final AtomicLong countNotOne = new AtomicLong();
        final AtomicLong i5 = new AtomicLong();
        final AtomicLong notAcknowledged = new AtomicLong();
        final AtomicLong corrupt = new AtomicLong();
        final AtomicLong ackFailures = new AtomicLong();
        final AtomicLong polls = new AtomicLong();
        final AtomicLong maxHeld = new AtomicLong();
        volatile String failure;

        SlowConsumer(int cap, long sleepMs, long endNanos) {
            this.cap = cap;
            this.sleepMs = sleepMs;
            this.endNanos = endNanos;
            for (int p = 0; p < partitions; p++) {
                delivered[p] = new BitSet();
                confirmed[p] = new BitSet();
                unconfirmed[p] = new BitSet();
            }
        }

        @Override
        public void run() {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("group.id", GROUP);
            p.put("share.acknowledgement.mode", "explicit");
            // Ask for more than the cap allows: the broker's cap must be what holds the consumer.
            p.put("max.poll.records", String.valueOf(cap * partitions));
            p.put("max.partition.fetch.bytes", String.valueOf(4 * cap * RECORD_BYTES));
            p.put("fetch.max.bytes", String.valueOf(4 * cap * partitions * RECORD_BYTES));
            try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p,
                    new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(Set.of(TOPIC));
                while (System.nanoTime() < endNanos) {
                    ConsumerRecords<byte[], byte[]> records;
                    gate.lock();
                    try {
                        records = poll(consumer);
                    } finally {
                        gate.unlock();
                    }
                    if (records.isEmpty()) {
                        continue;
                    }
                    // The slow part: the records stay ACQUIRED meanwhile, so the samples see what
                    // the consumer holds. A quiet sample may take the gate now (no acknowledgement
                    // is in flight) and hold the consumer before it acknowledges.
                    Thread.sleep(sleepMs);
                    gate.lock();
                    try {
                        acceptAll(consumer, records);
                    } finally {
                        gate.unlock();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = "interrupted";
            } catch (RuntimeException e) {
                failure = e.toString();
            }
        }

        private ConsumerRecords<byte[], byte[]> poll(KafkaShareConsumer<byte[], byte[]> consumer) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
            if (!records.isEmpty()) {
                polls.incrementAndGet();
                maxHeld.accumulateAndGet(records.count(), Math::max);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    check(r);
                }
            }
            return records;
        }

        /** ACCEPTs a poll's records and confirms them with commitSync. */
        private void acceptAll(KafkaShareConsumer<byte[], byte[]> consumer, ConsumerRecords<byte[], byte[]> records) {
            Map<Integer, List<Long>> sent = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : records) {
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                sent.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
            }
            Map<TopicIdPartition, Optional<KafkaException>> result;
            try {
                result = consumer.commitSync(Duration.ofSeconds(30));
            } catch (KafkaException e) {
                example("commitSync failed: " + e);
                result = Map.of();
            }
            for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
                List<Long> offsets = sent.remove(e.getKey().partition());
                if (offsets == null) {
                    continue;
                }
                if (e.getValue().isPresent()) {
                    ackFailures.addAndGet(offsets.size());
                    example("ACCEPT of " + offsets.size() + " records on partition " + e.getKey().partition()
                            + " not confirmed: " + e.getValue().get());
                    offsets.forEach(o -> unconfirmed[e.getKey().partition()].set(Math.toIntExact(o)));
                    continue;
                }
                for (long o : offsets) {
                    confirmed[e.getKey().partition()].set(Math.toIntExact(o));
                }
                confirmedCount.addAndGet(offsets.size());
            }
            // What commitSync did not answer for stays unconfirmed.
            sent.forEach((partition, offsets) -> {
                ackFailures.addAndGet(offsets.size());
                offsets.forEach(o -> unconfirmed[partition].set(Math.toIntExact(o)));
            });
        }

        /** One delivery against what the producer was told and what this consumer confirmed before. */
        private void check(ConsumerRecord<byte[], byte[]> r) {
            deliveries.incrementAndGet();
            int p = r.partition();
            int offset = Math.toIntExact(r.offset());
            long seq = sequenceOf(p, r.value());
            if (seq < 0) {
                corrupt.incrementAndGet();
                problem(corrupt.get(), "I2: partition " + p + " offset " + offset + " holds a value no producer sent");
            } else if (ackedOffset[p][(int) seq] != offset) {
                notAcknowledged.incrementAndGet();
                problem(notAcknowledged.get(), "partition " + p + " offset " + offset + " holds sequence " + seq
                        + ", which its producer was told is at offset " + ackedOffset[p][(int) seq]
                        + " (-1: not acknowledged)");
            }
            short count = r.deliveryCount().orElse((short) -1);
            if (count != 1) {
                countNotOne.incrementAndGet();
                example("partition " + p + " offset " + offset + " delivered with delivery count " + count);
            }
            if (confirmed[p].get(offset)) {
                i5.incrementAndGet();
                problem(i5.get(), "I5: partition " + p + " offset " + offset + " delivered again (count " + count
                        + ") after its ACCEPT was confirmed");
            } else if (delivered[p].get(offset)) {
                example("partition " + p + " offset " + offset + " redelivered (count " + count + "; its ACCEPT"
                        + (unconfirmed[p].get(offset) ? " was not confirmed)" : " was never sent)"));
            }
            if (delivered[p].get(offset)) {
                redeliveries.incrementAndGet();
            }
            delivered[p].set(offset);
        }
    }

    /** High watermark and share-partition start offset of every partition, from Admin; -1 if none. */
    private record Truth(long[] hwm, long[] spso, long[] adminLag) {
        long lag(int p) {
            return spso[p] < 0 ? -1 : hwm[p] - spso[p];
        }
    }

    private Truth truth() throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
        }
        var ends = admin.listOffsets(latest).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        Map<TopicPartition, SharePartitionOffsetInfo> starts = admin
                .listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(GROUP).get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        long[] hwm = new long[partitions];
        long[] spso = new long[partitions];
        long[] adminLag = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(TOPIC, p);
            hwm[p] = ends.get(tp).offset();
            SharePartitionOffsetInfo info = starts.get(tp);
            spso[p] = info == null ? -1 : info.startOffset();
            adminLag[p] = info == null ? -1 : info.lag().orElse(-1L);
        }
        return new Truth(hwm, spso, adminLag);
    }

    /** The samples while the consumer runs, and what they found. */
    private final class Samples {
        private final int cap;
        int quietSamples;
        int quietMismatches;
        int quietRetried;
        long movingMaxDiff;
        long maxAcquired;
        long maxWindow;
        long maxMemberAcquired;
        long lastConfirmed;
        long lastSecs;
        private long lastAcquired;
        private long lastMemberAcquired;
        private long lastWindow;

        Samples(int cap) {
            this.cap = cap;
        }

        void take(SlowConsumer consumer, long secs) throws Exception {
            // While records move: the metric and its truth read back to back.
            ScrapedMetrics moving = ScrapedMetrics.scrape(metricsPort);
            Truth movingTruth = truth();
            long metricSum = 0;
            long truthSum = 0;
            boolean complete = true;
            for (int p = 0; p < partitions; p++) {
                double metric = lagMetric(moving, p);
                complete &= !Double.isNaN(metric) && movingTruth.lag(p) >= 0;
                metricSum += (long) metric;
                truthSum += movingTruth.lag(p);
            }
            if (complete) {
                movingMaxDiff = Math.max(movingMaxDiff, Math.abs(metricSum - truthSum));
            }
            bounds(moving);
            int mismatchedBefore = quietMismatches;
            Truth quietTruth = quiet(consumer, "at t=" + secs + " s");
            boolean quietMatched = quietMismatches == mismatchedBefore;
            long rss = rssMiB();
            long heap = heapMiB();
            maxRssMiB = Math.max(maxRssMiB, rss);
            maxHeapMiB = Math.max(maxHeapMiB, heap);
            consumeHeapsMiB.add(heap);
            long confirmed = consumer.confirmedCount.get();
            long quietSum = 0;
            for (int p = 0; p < partitions; p++) {
                quietSum += quietTruth.lag(p);
            }
            System.out.printf(Locale.ROOT, "[backlog-soak] t=%4ds | ACCEPT confirmed %,d (%,d/s) | resident %,d MiB,"
                    + " heap %,d MiB | quiet: lag (hwm - spso) %,d%s | moving: %s | acquired %,d (member %,d; cap x"
                    + " partitions %,d), window max %,d%n",
                    secs, confirmed, (confirmed - lastConfirmed) / Math.max(1, secs - lastSecs), rss, heap, quietSum,
                    quietMatched ? " = pier_share_lag = Admin's = clients'" : ", not all equal (see PROBLEM)",
                    complete ? String.format(Locale.ROOT, "metric %,d, truth %,d, diff %,d", metricSum, truthSum,
                            metricSum - truthSum) : "not every partition has a lag yet",
                    lastAcquired, lastMemberAcquired,
                    (long) cap * partitions, lastWindow);
            lastConfirmed = confirmed;
            lastSecs = secs;
        }

        /**
         * Holds the consumer between polls (its acknowledgements confirmed, none in flight), waits
         * for a metrics snapshot taken after that, then compares the lag metric with its truth
         * partition by partition: they must be equal. A snapshot is published every
         * {@code snapshotMs}; a mismatch is read again after one more interval (twice at most),
         * since a shard busy with the load may publish late, and counted if it stays.
         */
        Truth quiet(SlowConsumer consumer, String when) throws Exception {
            consumer.gate.lock();
            try {
                Thread.sleep(snapshotMs + 300);
                List<String> mismatches = List.of();
                Truth t = null;
                for (int attempt = 0; attempt < 3; attempt++) {
                    if (attempt > 0) {
                        quietRetried++;
                        Thread.sleep(snapshotMs);
                    }
                    t = truth();
                    ScrapedMetrics m = ScrapedMetrics.scrape(metricsPort);
                    bounds(m);
                    mismatches = new ArrayList<>();
                    for (int p = 0; p < partitions; p++) {
                        double metric = lagMetric(m, p);
                        // The clients' own count besides: the producer's records acknowledged less
                        // the consumer's confirmed ACCEPTs from offset 0 on, in one piece (the
                        // gate makes what the consumer thread wrote visible here).
                        long clientLag = ackedEnd[p] - consumer.confirmed[p].nextClearBit(0);
                        if (metric != t.lag(p) || t.adminLag()[p] != t.lag(p) || clientLag != t.lag(p)) {
                            mismatches.add(String.format(Locale.ROOT, "partition %d: pier_share_lag %.0f, hwm %d -"
                                    + " spso %d = %d, Admin lag %d, clients' count %d, in flight ACCEPTed/archived"
                                    + " %.0f", p, metric, t.hwm()[p], t.spso()[p], t.lag(p), t.adminLag()[p], clientLag,
                                    m.value("pier_share_in_flight_records", "group", GROUP, "topic", TOPIC,
                                            "partition", String.valueOf(p), "state", "acknowledged")
                                    + m.value("pier_share_in_flight_records", "group", GROUP, "topic", TOPIC,
                                            "partition", String.valueOf(p), "state", "archived")));
                        }
                    }
                    if (mismatches.isEmpty()) {
                        break;
                    }
                }
                quietSamples++;
                if (!mismatches.isEmpty()) {
                    quietMismatches++;
                    problems.add("lag metric " + when + " (quiet): " + String.join("; ", mismatches));
                }
                return t;
            } finally {
                consumer.gate.unlock();
            }
        }

        /** The records held ACQUIRED and the in-flight windows, against the cap. */
        private void bounds(ScrapedMetrics m) {
            long acquired = 0;
            long window = 0;
            for (int p = 0; p < partitions; p++) {
                String partition = String.valueOf(p);
                acquired += (long) m.sum("pier_share_in_flight_records", "group", GROUP, "topic", TOPIC,
                        "partition", partition, "state", "acquired");
                long w = (long) m.sum("pier_share_in_flight_records", "group", GROUP, "topic", TOPIC,
                        "partition", partition);
                window = Math.max(window, w);
                // batch_optimized acquisition (Kafka's default) takes the log batch in which the
                // budget ran out whole: a window may pass the cap by less than one log batch.
                if (w > cap + MAX_BATCH_RECORDS - 1) {
                    problems.add("partition " + p + ": in-flight window of " + w + " records, past the cap " + cap
                            + " by more than a log batch (" + MAX_BATCH_RECORDS + " records at most)");
                }
            }
            long member = (long) m.sum("pier_share_member_acquired_records", "group", GROUP);
            lastAcquired = acquired;
            lastMemberAcquired = member;
            lastWindow = window;
            maxAcquired = Math.max(maxAcquired, acquired);
            maxMemberAcquired = Math.max(maxMemberAcquired, member);
            maxWindow = Math.max(maxWindow, window);
        }

        void report() {
            System.out.printf(Locale.ROOT, "[backlog-soak] lag: %d quiet samples, %d mismatched (%d read again after"
                    + " one more snapshot); while moving, max |metric - truth| %,d records%n", quietSamples,
                    quietMismatches, quietRetried, movingMaxDiff);
            long capTotal = (long) cap * partitions;
            System.out.printf(Locale.ROOT, "[backlog-soak] in flight: acquired max %,d, the member's max %,d (cap %d x"
                    + " %d partitions = %,d%s); largest window %,d (cap %d; a log batch holds at most %d)%n",
                    maxAcquired, maxMemberAcquired, cap, partitions, capTotal,
                    Math.max(maxAcquired, maxMemberAcquired) <= capTotal ? ", within"
                            : ", passed by " + (Math.max(maxAcquired, maxMemberAcquired) - capTotal)
                                    + ": the last log batch is acquired whole",
                    maxWindow, cap, MAX_BATCH_RECORDS);
        }
    }

    /** Lists the first few of a kind of problem; the count of each kind is reported besides. */
    private void problem(long nth, String what) {
        if (nth <= EXAMPLES) {
            problems.add(what);
        }
    }

    /** Keeps a bounded number of things worth a look, printed at the end. */
    private void example(String what) {
        if (examples.size() < 4 * EXAMPLES) {
            examples.add(what);
        }
    }

    private static double lagMetric(ScrapedMetrics m, int p) {
        return m.value("pier_share_lag", "group", GROUP, "topic", TOPIC, "partition", String.valueOf(p));
    }

    /**
     * I1: every acknowledged record is ACCEPTed (confirmed), or settled by an ACCEPT the consumer
     * sent unconfirmed, or still in the log at or past the start offset: those are read back and
     * compared byte for byte. Returns how many were still in the log.
     */
    private long checkNothingLost(SlowConsumer consumer, Truth t) {
        BitSet[] readBack = readBack(t);
        long pending = 0;
        long settledUnconfirmed = 0;
        for (int p = 0; p < partitions; p++) {
            for (int seq = 0; seq < perPartition; seq++) {
                long o = ackedOffset[p][seq];
                if (o < 0) {
                    continue;
                }
                int offset = Math.toIntExact(o);
                if (consumer.confirmed[p].get(offset)) {
                    continue;
                }
                if (o < t.spso()[p]) {
                    if (consumer.unconfirmed[p].get(offset)) {
                        settledUnconfirmed++;
                    } else {
                        lost++;
                        if (lost <= EXAMPLES) {
                            problems.add("I1: partition " + p + " offset " + o + " (sequence " + seq + ") is below the"
                                    + " start offset " + t.spso()[p] + " and was never ACCEPTed");
                        }
                    }
                } else if (readBack[p].get(offset)) {
                    pending++;
                } else {
                    lost++;
                    if (lost <= EXAMPLES) {
                        problems.add("I1: partition " + p + " offset " + o + " (sequence " + seq + ") was not found"
                                + " in the log past the start offset " + t.spso()[p]);
                    }
                }
            }
        }
        if (lost > EXAMPLES) {
            problems.add("I1: " + lost + " acknowledged records lost in all");
        }
        System.out.printf(Locale.ROOT, "[backlog-soak] I1: %,d acknowledged records ACCEPTed, %,d settled by an"
                + " unconfirmed ACCEPT, %,d read back from the log past the start offsets %s, %,d lost%n",
                consumer.confirmedCount.get(), settledUnconfirmed, pending, Arrays.toString(t.spso()), lost);
        return pending;
    }

    /** Reads every partition from the group's start offset to the high watermark, checking each value. */
    private BitSet[] readBack(Truth t) {
        BitSet[] found = new BitSet[partitions];
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("max.partition.fetch.bytes", String.valueOf(8 << 20));
        p.put("fetch.max.bytes", String.valueOf(64 << 20));
        p.put("enable.auto.commit", "false");
        long bytes = 0;
        long wrong = 0;
        long start = System.nanoTime();
        // Bounded: 10 min plus 1 min per GiB to read, far more than reading from the page cache takes.
        long deadline = start + Duration.ofMinutes(10).toNanos()
                + Duration.ofMinutes(1).toNanos() * ((long) perPartition * partitions * RECORD_BYTES >> 30);
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                found[i] = new BitSet();
                tps.add(new TopicPartition(TOPIC, i));
            }
            reader.assign(tps);
            for (int i = 0; i < partitions; i++) {
                reader.seek(tps.get(i), Math.max(0, t.spso()[i]));
            }
            while (System.nanoTime() < deadline && !caughtUp(reader, tps, t)) {
                for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ofMillis(500))) {
                    int i = r.partition();
                    long seq = sequenceOf(i, r.value());
                    if (seq < 0 || ackedOffset[i][(int) seq] != r.offset()) {
                        problem(++wrong, "read back: partition " + i + " offset " + r.offset() + " holds "
                                + (seq < 0 ? "a value no producer sent" : "sequence " + seq + ", acknowledged at "
                                        + ackedOffset[i][(int) seq]));
                        continue;
                    }
                    found[i].set(Math.toIntExact(r.offset()));
                    bytes += r.value().length;
                }
            }
            if (wrong > EXAMPLES) {
                problems.add("read back: " + wrong + " records not as their producer was told, in all");
            }
            if (!caughtUp(reader, tps, t)) {
                problems.add("read back did not reach the high watermarks in time");
            }
        }
        System.out.printf(Locale.ROOT, "[backlog-soak] read back %,d MiB from the start offsets in %.0f s%n",
                bytes >> 20, (System.nanoTime() - start) / 1e9);
        return found;
    }

    private static boolean caughtUp(KafkaConsumer<?, ?> reader, List<TopicPartition> tps, Truth t) {
        for (int i = 0; i < tps.size(); i++) {
            if (reader.position(tps.get(i)) < t.hwm()[i]) {
                return false;
            }
        }
        return true;
    }

    private void reportConsumer(SlowConsumer c) {
        System.out.printf(Locale.ROOT, "[backlog-soak] consumer: %,d polls, %,d deliveries, %,d ACCEPT confirmed,"
                + " %,d not confirmed, %,d redeliveries, %,d with delivery count not 1, %,d I5 violations, %,d not"
                + " acknowledged to the producer at that offset, %,d corrupt; at most %,d records from one poll%n",
                c.polls.get(), c.deliveries.get(), c.confirmedCount.get(), c.ackFailures.get(),
                c.redeliveries.get(), c.countNotOne.get(), c.i5.get(), c.notAcknowledged.get(), c.corrupt.get(),
                c.maxHeld.get());
        // No faults here: every redelivery, and every count other than 1, is worth a look.
        if (c.redeliveries.get() > 0 || c.countNotOne.get() > 0) {
            problems.add(c.redeliveries.get() + " redeliveries and " + c.countNotOne.get()
                    + " delivery counts other than 1 in a run without faults");
        }
        if (c.corrupt.get() + c.notAcknowledged.get() + c.i5.get() > EXAMPLES) {
            problems.add("in all: " + c.corrupt.get() + " values no producer sent, " + c.notAcknowledged.get()
                    + " records not acknowledged to their producer at that offset, " + c.i5.get() + " I5 violations");
        }
        if (c.deliveries.get() == 0) {
            problems.add("the consumer was given nothing");
        }
    }

    private void reportMemory() {
        int n = consumeHeapsMiB.size();
        String growth = "too few samples to tell";
        if (n >= 6) {
            long first = median(consumeHeapsMiB.subList(0, n / 3));
            long last = median(consumeHeapsMiB.subList(n - n / 3, n));
            // Live heap after a full GC: a bounded broker holds it level. Half again and 16 MiB
            // more is growth worth a look, not noise.
            heapGrew = last > first + Math.max(16, first / 2);
            growth = String.format(Locale.ROOT, "median of the first third %,d MiB, of the last third %,d MiB%s",
                    first, last, heapGrew ? ": GREW" : "");
            if (heapGrew) {
                problems.add("the broker's live heap grew while the consumer ran: " + growth);
            }
        }
        System.out.printf(Locale.ROOT, "[backlog-soak] memory: resident max %,d MiB, heap max %,d MiB; heap while"
                + " consuming (%d samples): %s; all: %s%n", maxRssMiB, maxHeapMiB, n, growth, consumeHeapsMiB);
    }

    private static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private void memory(String when) throws IOException, InterruptedException {
        long rss = rssMiB();
        long heap = heapMiB();
        maxRssMiB = Math.max(maxRssMiB, rss);
        maxHeapMiB = Math.max(maxHeapMiB, heap);
        System.out.printf(Locale.ROOT, "[backlog-soak] %s: resident %,d MiB, heap %,d MiB%n", when, rss, heap);
    }

    private long rssMiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(brokerPid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
            }
        }
        throw new IOException("no VmRSS for process " + brokerPid);
    }

    /** The broker's live heap: a class histogram runs a full GC first, then counts. */
    private long heapMiB() throws IOException, InterruptedException {
        Process jcmd = new ProcessBuilder("jcmd", String.valueOf(brokerPid), "GC.class_histogram")
                .redirectErrorStream(true).start();
        String out;
        try (InputStream in = jcmd.getInputStream()) {
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            in.transferTo(buffer);
            out = buffer.toString(StandardCharsets.UTF_8);
        }
        if (!jcmd.waitFor(120, TimeUnit.SECONDS)) {
            jcmd.destroyForcibly();
            throw new IOException("jcmd did not finish");
        }
        for (String line : out.split("\n")) {
            if (line.startsWith("Total")) {
                return Long.parseLong(line.trim().split("\\s+")[2]) >> 20;
            }
        }
        throw new IOException("no class histogram from jcmd: " + out.lines().limit(5).toList());
    }

    private static byte[] value(int partition, long seq) {
        return ByteBuffer.allocate(RECORD_BYTES).putInt(partition).putLong(seq).putInt(MAGIC)
                .put(FILLER, (int) (seq % FILLER_BYTES), FILLER_BYTES).array();
    }

    /** The sequence a value carries if it is one the producer of {@code partition} sent, else -1. */
    private long sequenceOf(int partition, byte[] v) {
        if (v == null || v.length != RECORD_BYTES) {
            return -1;
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        long seq = b.getLong(4);
        if (b.getInt(0) != partition || b.getInt(12) != MAGIC || seq < 0 || seq >= perPartition) {
            return -1;
        }
        int from = (int) (seq % FILLER_BYTES);
        return Arrays.equals(v, HEADER_BYTES, RECORD_BYTES, FILLER, from, from + FILLER_BYTES) ? seq : -1;
    }

    private static byte[] filler() {
        byte[] block = new byte[FILLER_BYTES];
        new Random(43).nextBytes(block);
        byte[] twice = new byte[2 * FILLER_BYTES];
        System.arraycopy(block, 0, twice, 0, FILLER_BYTES);
        System.arraycopy(block, 0, twice, FILLER_BYTES, FILLER_BYTES);
        return twice;
    }
}
