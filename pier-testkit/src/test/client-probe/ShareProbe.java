import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The share-group cell of the client-version matrix, for the kafka-clients releases that have
 * KafkaShareConsumer (4.2 onwards), run like ClientProbe with only that release's jars:
 * java -cp JARS ShareProbe.java BOOTSTRAP TOPIC GROUP
 *
 * <p>Creates TOPIC, starts GROUP at the earliest offset (a group config), produces 30 records,
 * and a share consumer ACCEPTs each of them and commits. Then one more record is produced and a
 * second consumer of the group reads until it has it: it must get that record alone, so none of
 * the 30 came back. Prints one summary line; any failure throws, so the exit code is not 0.
 */
public class ShareProbe {
    private static final int COUNT = 30;
    private static final long WAIT_S = 30;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        String version = clientVersion();
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(WAIT_S, TimeUnit.SECONDS);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get(WAIT_S, TimeUnit.SECONDS);
        }
        Set<String> produced = new HashSet<>();
        for (int i = 0; i < COUNT; i++) {
            produced.add(version + "-" + i);
        }
        produce(common, topic, new ArrayList<>(produced));

        Received first = acceptUntil(common, group, topic, produced);
        check(first.accepted.equals(produced) && first.duplicates == 0 && first.ackErrors == 0,
                "first consumer " + first);

        String marker = version + "-marker";
        produce(common, topic, List.of(marker));
        Received second = acceptUntil(common, group, topic, Set.of(marker));
        check(second.received.equals(List.of(marker)) && second.ackErrors == 0,
                "second consumer " + second + "; only " + marker + " was due");
        System.out.println("SHARE-PROBE version=" + version + " produced=" + COUNT + " accepted=" + first.accepted.size()
                + " ackErrors=" + first.ackErrors + " redelivered=" + (second.received.size() - 1) + " result=OK");
    }

    /** What one consumer got: every value in delivery order, those whose ACCEPT was committed, and failures. */
    private static final class Received {
        final List<String> received = new ArrayList<>();
        final Set<String> accepted = new HashSet<>();
        int duplicates;
        int ackErrors;

        @Override
        public String toString() {
            return "received=" + received + " accepted=" + accepted.size() + " duplicates=" + duplicates
                    + " ackErrors=" + ackErrors;
        }
    }

    /** A new share consumer of the group ACCEPTs what it gets until {@code due} is all accepted, or 30 s pass. */
    private static Received acceptUntil(Properties common, String group, String topic, Set<String> due) {
        Properties c = new Properties();
        c.putAll(common);
        c.put("group.id", group);
        c.put("share.acknowledgement.mode", "explicit");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        Received out = new Received();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(c)) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (!out.accepted.containsAll(due) && System.nanoTime() < deadline) {
                List<String> batch = new ArrayList<>();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (out.received.contains(r.value())) {
                        out.duplicates++;
                    }
                    out.received.add(r.value());
                    batch.add(r.value());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                Map<TopicIdPartition, Optional<KafkaException>> results = consumer.commitSync();
                long failed = results.values().stream().filter(Optional::isPresent).count();
                if (failed == 0) {
                    out.accepted.addAll(batch);
                } else {
                    out.ackErrors += (int) failed;
                }
            }
        }
        return out;
    }

    private static void produce(Properties common, String topic, List<String> values) throws Exception {
        Properties p = new Properties();
        p.putAll(common);
        p.put("acks", "all");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String v : values) {
                producer.send(new ProducerRecord<>(topic, v)).get(WAIT_S, TimeUnit.SECONDS);
            }
        }
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
