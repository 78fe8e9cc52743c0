import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One cell of the client-version matrix: the admin client, producer and consumer of whichever
 * kafka-clients is on the class path, against Pier. Run with Java's source launcher and only
 * that release's jars, so it compiles against that release's API, which keeps it to what every
 * release of the matrix has (3.9 onwards):
 * java -cp JARS ClientProbe.java BOOTSTRAP TOPIC GROUP
 *
 * <p>Creates TOPIC (2 partitions) and a scratch topic, describes both, deletes the scratch one;
 * produces 20 records whose values start with the client's version, zstd-compressed (so the
 * release's own compression library is used too); consumes them in GROUP
 * (subscribe, classic protocol, the client's default) and commits; reads the committed offsets
 * and the group list back. Prints one summary line; any failure throws, so the exit code is not 0.
 */
public class ClientProbe {
    private static final int COUNT = 20;
    private static final long WAIT_S = 30;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        String version = clientVersion();
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);

        try (Admin admin = Admin.create(common)) {
            administerTopics(admin, topic);
            produce(common, topic, version);
            Set<String> consumed = consumeAndCommit(common, topic, group);
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < COUNT; i++) {
                expected.add(version + "-" + i);
            }
            check(consumed.equals(expected), "consumed " + consumed + ", expected " + expected);

            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(WAIT_S, TimeUnit.SECONDS);
            long committedTotal = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            check(committedTotal == COUNT, "committed offsets " + committed);
            boolean listed = false;
            for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(WAIT_S, TimeUnit.SECONDS)) {
                listed |= g.groupId().equals(group);
            }
            check(listed, "group " + group + " not listed");
            System.out.println("CLIENT-PROBE version=" + version + " topics=OK produced=" + COUNT + " consumed="
                    + consumed.size() + " committed=" + committedTotal + " groupListed=" + listed + " result=OK");
        }
    }

    private static void administerTopics(Admin admin, String topic) throws Exception {
        String scratch = topic + "-scratch";
        admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1), new NewTopic(scratch, 1, (short) 1))).all()
                .get(WAIT_S, TimeUnit.SECONDS);
        Map<String, TopicDescription> described = admin.describeTopics(List.of(topic, scratch)).allTopicNames()
                .get(WAIT_S, TimeUnit.SECONDS);
        check(described.get(topic).partitions().size() == 2, "described " + described);
        check(described.get(scratch).partitions().size() == 1, "described " + described);
        admin.deleteTopics(List.of(scratch)).all().get(WAIT_S, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        Set<String> names = admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS);
        while (names.contains(scratch) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            names = admin.listTopics().names().get(WAIT_S, TimeUnit.SECONDS);
        }
        check(names.contains(topic) && !names.contains(scratch), "listed " + names);
    }

    private static void produce(Properties common, String topic, String version) throws Exception {
        Properties p = new Properties();
        p.putAll(common);
        p.put("acks", "all");
        p.put("compression.type", "zstd");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < COUNT; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "k" + i, version + "-" + i))
                        .get(WAIT_S, TimeUnit.SECONDS);
            }
        }
    }

    private static Set<String> consumeAndCommit(Properties common, String topic, String group) {
        Properties c = new Properties();
        c.putAll(common);
        c.put("group.id", group);
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        Set<String> values = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (values.size() < COUNT && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
            consumer.commitSync(Duration.ofSeconds(WAIT_S));
        }
        return values;
    }

    /** The release on the class path, as the client itself reads it (its internal reader moved in 4.4). */
    private static String clientVersion() throws java.io.IOException {
        Properties p = new Properties();
        try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            p.load(in);
        }
        return p.getProperty("version");
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }
}
