package io.pier.it.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.log.FaultyDisk;
import io.pier.log.ForwardingFileChannel;
import io.pier.log.FileIO;
import io.pier.server.Pier;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash window of dead letters (KIP-1191), hit on purpose: the letter of a REJECTed record is
 * in the dead-letter queue, and the write that would move the record from ARCHIVING to ARCHIVED
 * fails. The disk holding the share state fills up the moment the queue's segment is written (a
 * {@link FileIO} layer in this test, nothing in the broker), so the broker stops (FATAL, as on any
 * storage failure) with the letter written and the record still ARCHIVING on disk. A restart on the
 * same data must find the letter in the queue and not write it again: exactly one letter.
 */
@Timeout(120)
class DeadLetterCrashWindowIT {
    private static final String TOPIC = "window";
    private static final String QUEUE = "dlq.window";
    private static final String GROUP = "window-group";

    @TempDir
    Path dataDir;

    @Test
    void shouldWriteOneLetterWhenTheBrokerStopsBetweenTheLetterAndArchived() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        Path queueDir = dataDir.resolve("logs").resolve(QUEUE + "-0").toAbsolutePath().normalize();
        FillOnQueueWrite io = new FillOnQueueWrite(disk, queueDir, dataDir.resolve("share-state"));
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(io).onFatal(stopped::countDown).start();
        int port = pier.port();
        try {
            String bootstrap = pier.bootstrapServers();
            setUp(bootstrap);
            produce(bootstrap, List.of("a", "bad", "c"));
            io.arm();
            // The REJECT's ARCHIVING write goes through, and is confirmed; then the letter is
            // appended, the share state's disk fills, ARCHIVED cannot be written and the broker stops.
            try (KafkaShareConsumer<String, String> consumer = shareConsumer(bootstrap)) {
                consumer.subscribe(Set.of(TOPIC));
                int seen = 0;
                boolean rejectConfirmed = false;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (seen < 3 && System.nanoTime() < deadline) {
                    int inPoll = 0;
                    boolean rejectInPoll = false;
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        boolean bad = r.value().equals("bad");
                        consumer.acknowledge(r, bad ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT);
                        rejectInPoll |= bad;
                        inPoll++;
                    }
                    if (inPoll == 0) {
                        continue;
                    }
                    Map<TopicIdPartition, java.util.Optional<KafkaException>> result =
                            consumer.commitSync(Duration.ofSeconds(5));
                    assertThat(result.values()).as("acknowledgements confirmed").allMatch(java.util.Optional::isEmpty);
                    seen += inPoll;
                    rejectConfirmed |= rejectInPoll;
                }
                assertThat(rejectConfirmed).as("the REJECT confirmed before the broker stopped").isTrue();
            }
            assertThat(stopped.await(30, TimeUnit.SECONDS)).as("broker stopped on the failed ARCHIVED write")
                    .isTrue();
            assertThat(io.queueWrites()).as("appends to the queue before the stop: one letter, not appended again").isEqualTo(1);
            assertThat(disk.refusedWrites()).as("share-state writes refused").isPositive();
        } finally {
            pier.close();
        }

        try (StderrTee log = StderrTee.start();
                Pier again = Pier.builder().dataDir(dataDir).port(port).start()) {
            awaitStartOffset(again.bootstrapServers(), 3, false);
            List<Map<String, String>> letters = readQueue(again.bootstrapServers());
            assertThat(letters).as("letters in %s", QUEUE).hasSize(1);
            assertThat(letters.get(0))
                    .containsEntry("__dlq.errors.topic", TOPIC)
                    .containsEntry("__dlq.errors.offset", "1")
                    .containsEntry("__dlq.errors.group", GROUP)
                    .containsEntry("value", "bad");
            assertThat(log.text()).as("the restart found the letter already written")
                    .contains("are in the queue already");
            Thread.sleep(500);
            assertThat(readQueue(again.bootstrapServers())).as("still one letter a while later").hasSize(1);
        }
    }

    /**
     * Twice in the window. First stop: the letter of X (REJECTed) is written, X stays ARCHIVING;
     * Y, before X, is held at its last delivery. After the restart Y dies as soon as a fetch finds
     * it has had its deliveries, and is taken with X in one batch: X's letter is found in the queue,
     * Y's is appended alone, and the broker stops again before ARCHIVED. After the second restart X
     * and Y are both still ARCHIVING, and the queue's last batch of their share-partition holds only
     * Y's letter: X's must still not be written a second time. Y died in memory (no write of its
     * own), so this also needs its ARCHIVING made durable before its letter is appended: else it
     * comes back alive after the restart and dies, and is lettered, again.
     */
    @Test
    void shouldWriteOneLetterEachWhenTheBrokerStopsTwiceInTheWindow() throws Exception {
        FaultyDisk disk = new FaultyDisk();
        Path queueDir = dataDir.resolve("logs").resolve(QUEUE + "-0").toAbsolutePath().normalize();
        FillOnQueueWrite io = new FillOnQueueWrite(disk, queueDir, dataDir.resolve("share-state"));
        CountDownLatch stopped = new CountDownLatch(1);
        Pier pier = Pier.builder().dataDir(dataDir).fileIO(io).onFatal(stopped::countDown).start();
        int port = pier.port();
        KafkaShareConsumer<String, String> consumer = null;
        try {
            String bootstrap = pier.bootstrapServers();
            setUp(bootstrap, "share.delivery.count.limit", "2");
            produce(bootstrap, List.of("Y", "X"));
            io.arm();
            consumer = shareConsumer(bootstrap);
            consumer.subscribe(Set.of(TOPIC));
            boolean yHeld = false;
            boolean xRejected = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!xRejected && System.nanoTime() < deadline) {
                List<String> polled = new ArrayList<>();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    short count = r.deliveryCount().orElseThrow();
                    polled.add(r.value() + "@" + count);
                    if (r.value().equals("Y")) {
                        if (count < 2) {
                            consumer.acknowledge(r, AcknowledgeType.RELEASE);
                        } else {
                            yHeld = true; // its last delivery, never acknowledged
                        }
                    } else if (yHeld) {
                        consumer.acknowledge(r, AcknowledgeType.REJECT);
                        xRejected = true;
                    } else {
                        assertThat(count).as("X released before Y is held (%s)", polled).isLessThan((short) 2);
                        consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    }
                }
                if (!polled.isEmpty()) {
                    assertThat(consumer.commitSync(Duration.ofSeconds(5)).values()).as("confirmed: %s", polled)
                            .allMatch(java.util.Optional::isEmpty);
                }
            }
            assertThat(xRejected).as("X REJECTed while Y is held").isTrue();
            assertThat(stopped.await(30, TimeUnit.SECONDS)).as("broker stopped after X's letter").isTrue();
            assertThat(io.queueWrites()).as("appends to the queue before the first stop").isEqualTo(1);
        } finally {
            if (consumer != null) {
                consumer.close(Duration.ofSeconds(1));
            }
            pier.close();
        }

        FaultyDisk disk2 = new FaultyDisk();
        FillOnQueueWrite io2 = new FillOnQueueWrite(disk2, queueDir, dataDir.resolve("share-state"));
        CountDownLatch stopped2 = new CountDownLatch(1);
        // Teed from before the start: the broker resumes X's letter by itself as soon as it is up.
        StderrTee log = StderrTee.start();
        Pier second = Pier.builder().dataDir(dataDir).port(port).fileIO(io2).onFatal(stopped2::countDown).start();
        try (log) {
            io2.arm();
            // A fetch finds Y spent: it dies, and goes with X into one batch of letters.
            try (KafkaShareConsumer<String, String> c = shareConsumer(second.bootstrapServers())) {
                c.subscribe(Set.of(TOPIC));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (stopped2.getCount() > 0 && System.nanoTime() < deadline) {
                    try {
                        assertThat(c.poll(Duration.ofMillis(100))).as("nothing left to deliver").isEmpty();
                    } catch (KafkaException e) {
                        // the broker is going away
                    }
                }
            }
            assertThat(stopped2.getCount()).as("broker stopped after Y's letter").isZero();
            assertThat(io2.queueWrites()).as("appends to the queue before the second stop").isEqualTo(1);
            assertThat(log.text()).as("X's letter found after the first restart").contains("are in the queue already");
        } finally {
            second.close();
        }

        try (Pier third = Pier.builder().dataDir(dataDir).port(port).start()) {
            awaitStartOffset(third.bootstrapServers(), 2);
            List<Map<String, String>> letters = readQueue(third.bootstrapServers());
            assertThat(letters).as("letters in %s", QUEUE)
                    .extracting(l -> l.get("value") + "@" + l.get("__dlq.errors.offset") + " count "
                            + l.get("__dlq.errors.delivery.count"))
                    .containsExactlyInAnyOrder("Y@0 count 2", "X@1 count 2");
        }
    }

    private static void setUp(String bootstrap, String... groupConfigs) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1),
                    new NewTopic(QUEUE, 1, (short) 1).configs(Map.of("errors.deadletterqueue.group.enable", "true"))))
                    .all().get();
            List<AlterConfigOp> ops = new ArrayList<>();
            Map<String, String> configs = new LinkedHashMap<>();
            configs.put("share.auto.offset.reset", "earliest");
            configs.put("errors.deadletterqueue.topic.name", QUEUE);
            configs.put("errors.deadletterqueue.copy.record.enable", "true");
            for (int i = 0; i + 1 < groupConfigs.length; i += 2) {
                configs.put(groupConfigs[i], groupConfigs[i + 1]);
            }
            configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, GROUP), ops)).all()
                    .get();
        }
    }

    private static void produce(String bootstrap, List<String> values) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(TOPIC, 0, "k-" + v, v)).get();
            }
        }
    }

    private static KafkaShareConsumer<String, String> shareConsumer(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", GROUP);
        p.put("share.acknowledgement.mode", "explicit");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    /**
     * Polls with a share consumer (a share-partition is loaded, and its dead letters written, once
     * it is fetched from) until the group's start offset is {@code expected}; nothing is delivered.
     */
    private static void awaitStartOffset(String bootstrap, long expected) throws Exception {
        awaitStartOffset(bootstrap, expected, true);
    }

    /** With {@code fetching} false no consumer fetches meanwhile: the broker resumes dead letters by itself. */
    private static void awaitStartOffset(String bootstrap, long expected, boolean fetching) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap));
                KafkaShareConsumer<String, String> consumer = shareConsumer(bootstrap)) {
            if (fetching) {
                consumer.subscribe(Set.of(TOPIC));
            }
            await("start offset " + expected).atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                if (fetching) {
                    assertThat(consumer.poll(Duration.ofMillis(100))).as("nothing left to deliver").isEmpty();
                }
                Map<TopicPartition, SharePartitionOffsetInfo> info = admin
                        .listShareGroupOffsets(Map.of(GROUP, new ListShareGroupOffsetsSpec()))
                        .partitionsToOffsetInfo(GROUP).get();
                SharePartitionOffsetInfo p = info.get(new TopicPartition(TOPIC, 0));
                assertThat(p == null ? -1 : p.startOffset()).isEqualTo(expected);
            });
        }
    }

    /** Every letter in the queue: its headers, and its value under "value". */
    private static List<Map<String, String>> readQueue(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        List<Map<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(QUEUE, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    Map<String, String> letter = new LinkedHashMap<>();
                    for (Header h : r.headers()) {
                        letter.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
                    }
                    letter.put("value", r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    out.add(letter);
                }
            }
        }
        return out;
    }

    /**
     * Real files through a {@link FaultyDisk}; once armed, the first write of data (not the zeros
     * of a preallocation) to a file in the queue partition's folder goes through and then fills the
     * share state's folder, before the writer goes on. Counts those writes: each is an append.
     */
    private static final class FillOnQueueWrite implements FileIO {
        private final FaultyDisk disk;
        private final Path queueDir;
        private final Path shareStateDir;
        private final AtomicInteger queueWrites = new AtomicInteger();
        private volatile boolean armed;

        FillOnQueueWrite(FaultyDisk disk, Path queueDir, Path shareStateDir) {
            this.disk = disk;
            this.queueDir = queueDir;
            this.shareStateDir = shareStateDir;
        }

        void arm() {
            armed = true;
        }

        int queueWrites() {
            return queueWrites.get();
        }

        /** After a write; {@code data}: not only zeros (a segment's preallocation writes zeros). */
        private void wrote(boolean data) {
            if (armed && data && queueWrites.incrementAndGet() == 1) {
                disk.fill(shareStateDir);
            }
        }

        private static boolean data(ByteBuffer b) {
            for (int i = b.position(); i < b.limit(); i++) {
                if (b.get(i) != 0) {
                    return true;
                }
            }
            return false;
        }

        private FileChannel watch(Path path, FileChannel channel) {
            return path.toAbsolutePath().normalize().startsWith(queueDir) && path.toString().endsWith(".log")
                    ? new Watched(channel) : channel;
        }

        @Override
        public FileChannel open(Path path, boolean create) throws IOException {
            return watch(path, disk.open(path, create));
        }

        @Override
        public FileChannel openEmpty(Path path) throws IOException {
            return watch(path, disk.openEmpty(path));
        }

        @Override
        public FileChannel openAppend(Path path) throws IOException {
            return watch(path, disk.openAppend(path));
        }

        @Override
        public void createDirectories(Path dir) throws IOException {
            disk.createDirectories(dir);
        }

        @Override
        public void move(Path source, Path target) throws IOException {
            disk.move(source, target);
        }

        @Override
        public boolean deleteIfExists(Path path) throws IOException {
            return disk.deleteIfExists(path);
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            disk.syncDirectory(dir);
        }

        /** A channel that reports its writes, after they are done. */
        private final class Watched extends ForwardingFileChannel {
            Watched(FileChannel real) {
                super(real);
            }

            @Override
            public int write(ByteBuffer src) throws IOException {
                boolean data = data(src);
                int n = real.write(src);
                wrote(data);
                return n;
            }

            @Override
            public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
                boolean data = false;
                for (int i = offset; i < offset + length; i++) {
                    data |= data(srcs[i]);
                }
                long n = real.write(srcs, offset, length);
                wrote(data);
                return n;
            }

            @Override
            public int write(ByteBuffer src, long position) throws IOException {
                boolean data = data(src);
                int n = real.write(src, position);
                wrote(data);
                return n;
            }

            @Override
            public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
                long n = real.transferFrom(src, position, count);
                wrote(true);
                return n;
            }
        }
    }
}
