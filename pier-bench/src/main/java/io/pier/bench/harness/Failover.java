package io.pier.bench.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Failover of a gateway node under load: a producer writes to the upstream at a steady rate,
 * share consumers bootstrapped on every gateway node accept each record, and one node at a time
 * is killed with SIGKILL. The figure is the time from the kill to the first record of a partition
 * the node led (per the nodes' metadata just before) that is delivered again. "Again" excludes
 * records the consumers had fetched from the dead node before it died: a record counts if it was
 * produced after the node was dead (its CreateTime is later) or is a redelivery (delivery count
 * above 1: one the dead node had handed out and never saw acknowledged).
 */
final class Failover implements AutoCloseable {
    /**
     * One kill: the node, the partitions it led, whether it coordinated the share group, and the
     * times from the kill: to the first record of one of its partitions delivered again, to a
     * record of each of them, and to metadata (asked of a surviving node) naming another leader
     * for all of them; NaN when it did not happen within the wait.
     */
    record Kill(int node, Set<Integer> partitions, boolean coordinator, double firstMs, double allMs,
            double metadataMs, String firstHow, String afterRestart) {}

    private final GatewayDeployment deployment;
    private final String kafkaBootstrap;
    private final String topic;
    private final int partitions;
    private final String group;
    private final int consumers;
    private final int rate;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLongArray lastDelivered;
    private final LongAdder delivered = new LongAdder();
    private final LongAdder produced = new LongAdder();
    private final LongAdder pollFailures = new LongAdder();
    private final AtomicReference<String> firstPollFailure = new AtomicReference<>();

    /** What the consumers watch for during one kill; null between kills. */
    private volatile Watch watch;

    private static final class Watch {
        final Set<Integer> partitions;
        /** Wall-clock ms at which the node was seen dead: records created after it cannot come from it. */
        final long deadWallMs;
        final Map<Integer, Long> firstNanos = new ConcurrentHashMap<>();
        final AtomicReference<String> firstHow = new AtomicReference<>();

        Watch(Set<Integer> partitions, long deadWallMs) {
            this.partitions = partitions;
            this.deadWallMs = deadWallMs;
        }
    }

    Failover(GatewayDeployment deployment, String kafkaBootstrap, String topic, int partitions, String group,
            int consumers, int rate) {
        this.deployment = deployment;
        this.kafkaBootstrap = kafkaBootstrap;
        this.topic = topic;
        this.partitions = partitions;
        this.group = group;
        this.consumers = consumers;
        this.rate = rate;
        this.lastDelivered = new AtomicLongArray(partitions);
    }

    /** Sets the group to read from the earliest offset, then starts the producer and the consumers. */
    void start() throws Exception {
        try (Admin admin = deployment.admin()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Thread producer = new Thread(this::produce, "failover-producer");
        threads.add(producer);
        producer.start();
        String bootstrap = deployment.bootstrap();
        for (int c = 0; c < consumers; c++) {
            int index = c;
            Thread t = new Thread(() -> consume(bootstrap, index), "failover-consumer-" + c);
            threads.add(t);
            t.start();
        }
    }

    /** The upstream producer: {@link #rate} records/s of 100 B, round-robin over the partitions, straight to Kafka. */
    private void produce() {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafkaBootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("client.id", "failover-producer");
        byte[] value = new byte[100];
        Arrays.fill(value, (byte) 'x');
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            long interval = 1_000_000_000L / rate;
            long next = System.nanoTime();
            for (long i = 0; !stop.get(); i++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                next += interval;
                // Failures would show as partitions that stop flowing; nothing to count here.
                var unused = producer.send(new ProducerRecord<>(topic, (int) (i % partitions), null, value));
                produced.increment();
            }
        } catch (RuntimeException e) {
            SideBySide.log("  failover producer failed: " + SideBySide.rootCause(e));
        }
    }

    private void consume(String bootstrap, int index) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", group + "-c" + index);
        p.put("share.acknowledgement.mode", "explicit");
        try (KafkaShareConsumer<byte[], byte[]> consumer =
                new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(100));
                } catch (RuntimeException e) {
                    // A failed poll (a node gone mid-request) is retried: the run measures when records come back.
                    pollFailures.increment();
                    firstPollFailure.compareAndSet(null, SideBySide.rootCause(e));
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    continue;
                }
                long now = System.nanoTime();
                Watch w = watch;
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    lastDelivered.set(r.partition(), now);
                    if (w != null && w.partitions.contains(r.partition())) {
                        short count = r.deliveryCount().orElse((short) 1);
                        boolean after = r.timestamp() > w.deadWallMs;
                        if ((after || count > 1) && w.firstNanos.putIfAbsent(r.partition(), now) == null) {
                            w.firstHow.compareAndSet(null, after ? "produced after the kill"
                                    : "redelivered (delivery count " + count + ")");
                        }
                    }
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                delivered.add(records.count());
            }
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            SideBySide.log("  failover consumer " + index + " failed: " + SideBySide.rootCause(e));
        }
    }

    /** Waits until every partition has had a record delivered in the last 2 s; false if not within {@code timeout}. */
    boolean awaitFlowing(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            long now = System.nanoTime();
            boolean all = true;
            for (int i = 0; i < partitions && all; i++) {
                long last = lastDelivered.get(i);
                all = last != 0 && now - last < TimeUnit.SECONDS.toNanos(2);
            }
            if (all) {
                return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    /** Partitions (from 0) that have had no record delivered in the last 2 s, for the log. */
    String stalled() {
        long now = System.nanoTime();
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            long last = lastDelivered.get(i);
            if (last == 0 || now - last >= TimeUnit.SECONDS.toNanos(2)) {
                out.add(i);
            }
        }
        return out.toString();
    }

    /**
     * Kills the node that {@code preferred} names or, if it leads nothing, the next that leads
     * something; waits for every partition it led to deliver again (at most {@code wait}); then
     * starts it again on its port and waits for the nodes to settle and every partition to flow.
     */
    Kill killOne(int preferred, Duration wait) throws Exception {
        Map<Integer, Integer> leaders;
        int coordinator;
        try (Admin admin = deployment.admin()) {
            leaders = GatewayDeployment.leaders(admin, topic);
            ShareGroupDescription g = admin.describeShareGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
            coordinator = g.coordinator() == null ? -1 : g.coordinator().id();
        }
        List<Integer> ids = new ArrayList<>(new TreeSet<>(leaders.values()));
        int victim = ids.contains(preferred) ? preferred : ids.get(Math.floorMod(preferred, ids.size()));
        Set<Integer> led = new TreeSet<>();
        leaders.forEach((partition, leader) -> {
            if (leader == victim) {
                led.add(partition);
            }
        });
        PierGateway node = deployment.node(victim);
        SideBySide.log(String.format(Locale.ROOT, "  kill -9 node %d (leads partitions %s%s); leaders before: %s",
                victim, led, victim == coordinator ? ", coordinates the group" : "", GatewayDeployment.split(leaders)));
        AtomicLong metadataNanos = new AtomicLong();
        AtomicBoolean polling = new AtomicBoolean(true);
        Thread metadata;
        try (Admin survivors = GatewayDeployment.admin(deployment.bootstrapWithout(victim))) {
            metadata = new Thread(() -> {
                while (polling.get()) {
                    try {
                        Map<Integer, Integer> now = GatewayDeployment.leaders(survivors, topic);
                        if (led.stream().allMatch(p -> now.getOrDefault(p, -1) != victim && now.getOrDefault(p, -1) >= 0)) {
                            metadataNanos.compareAndSet(0, System.nanoTime());
                            return;
                        }
                    } catch (Exception e) {
                        // the survivors' metadata while a node is dead can fail; ask again
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }, "failover-metadata");
            long killNanos = System.nanoTime();
            String killedAt = java.time.LocalTime.now().toString();
            node.kill();
            // Set once the process is gone: every record created from now on can only come from a survivor.
            Watch w = new Watch(led, System.currentTimeMillis());
            watch = w;
            metadata.start();
            long deadline = killNanos + wait.toNanos();
            while (System.nanoTime() < deadline && (w.firstNanos.size() < led.size() || metadataNanos.get() == 0)) {
                Thread.sleep(20);
            }
            polling.set(false);
            metadata.join(15_000);
            watch = null;
            List<Long> seen = new ArrayList<>(w.firstNanos.values());
            double firstMs = seen.isEmpty() ? Double.NaN : (java.util.Collections.min(seen) - killNanos) / 1e6;
            double allMs = seen.size() < led.size() ? Double.NaN : (java.util.Collections.max(seen) - killNanos) / 1e6;
            double metaMs = metadataNanos.get() == 0 ? Double.NaN : (metadataNanos.get() - killNanos) / 1e6;
            // The wall-clock time of the kill lines this up with the nodes' timestamped logs.
            SideBySide.log(String.format(Locale.ROOT, "    killed at %s; first record of its partitions again after "
                    + "%.0f ms (%s); all %d of them after %.0f ms; survivors' metadata moved them after %.0f ms",
                    killedAt, firstMs, w.firstHow.get(), led.size(), allMs, metaMs));
            if (w.firstNanos.size() < led.size()) {
                List<Integer> missing = new ArrayList<>(led);
                missing.removeAll(w.firstNanos.keySet());
                SideBySide.log("    not delivered again within " + wait.toSeconds() + " s: partitions " + missing
                        + "; stalled now: " + stalled() + "; leaders as each node answers: " + views());
            }
            long restartNanos = System.nanoTime();
            deployment.restart(victim);
            Map<Integer, Integer> after = deployment.awaitSettled(topic, Duration.ofSeconds(90));
            // A normal restart had every partition flowing again 10-14 s after it started (nodes
            // settled included); 30 s more is ample.
            boolean flowing = awaitFlowing(Duration.ofSeconds(30));
            String afterRestart;
            if (flowing) {
                afterRestart = String.format(Locale.ROOT, "every partition flowing %.1f s after the restart",
                        (System.nanoTime() - restartNanos) / 1e9);
            } else {
                afterRestart = "partitions " + stalled() + " delivered nothing for the last 2 s of a 30 s wait after "
                        + "the nodes settled; leaders as each node answers: " + views();
            }
            SideBySide.log("    node " + victim + " restarted; leaders: " + GatewayDeployment.split(after) + "; "
                    + afterRestart);
            return new Kill(victim, led, victim == coordinator, firstMs, allMs, metaMs, w.firstHow.get(), afterRestart);
        }
    }

    /**
     * The leaders of the topic's partitions as each live node answers a Metadata request by itself
     * (a fresh client bootstrapped on that node alone asks it first), e.g.
     * {@code node 1 {0=2, 1=1, ...}}: whether the nodes agree on a partition that is not flowing.
     */
    String views() {
        StringBuilder out = new StringBuilder();
        for (PierGateway node : deployment.nodes()) {
            Properties p = new Properties();
            p.put("bootstrap.servers", node.bootstrap());
            p.put("client.id", "failover-metadata-view");
            try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> c =
                    new org.apache.kafka.clients.consumer.KafkaConsumer<>(p, new ByteArrayDeserializer(),
                            new ByteArrayDeserializer())) {
                Map<Integer, Integer> leaders = new java.util.TreeMap<>();
                c.partitionsFor(topic, Duration.ofSeconds(5)).forEach(pi ->
                        leaders.put(pi.partition(), pi.leader() == null ? -1 : pi.leader().id()));
                out.append(out.length() == 0 ? "" : "; ").append("node ").append(node.nodeId).append(' ')
                        .append(leaders);
            } catch (RuntimeException e) {
                out.append(out.length() == 0 ? "" : "; ").append("node ").append(node.nodeId).append(" failed: ")
                        .append(SideBySide.rootCause(e));
            }
        }
        return out.toString();
    }

    /** Records produced, records delivered (redeliveries included), failed polls and the first failure. */
    String counts() {
        return String.format(Locale.ROOT, "%,d records produced, %,d delivered, %,d failed polls%s", produced.sum(),
                delivered.sum(), pollFailures.sum(),
                firstPollFailure.get() == null ? "" : " (the first: " + firstPollFailure.get() + ")");
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
    }
}
