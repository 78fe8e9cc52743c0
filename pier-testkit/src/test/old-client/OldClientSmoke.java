import java.time.Duration;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Smoke test for an older kafka-clients against Pier, run with Java's source launcher and only
 * that client's jars on the class path: java -cp JARS OldClientSmoke.java BOOTSTRAP TOPIC GROUP.
 * Produces 50 records, consumes and ACCEPTs them with a KafkaShareConsumer (the group must already
 * start at earliest), and prints one summary line. Exit code 0 only if all 50 were accepted.
 */
public class OldClientSmoke {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int count = 50;

        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("acks", "all");
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "old-" + i)).get();
            }
        }

        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("share.acknowledgement.mode", "explicit");
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        Set<String> accepted = new HashSet<>();
        int received = 0;
        int ackErrors = 0;
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(cp)) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            for (int polls = 0; accepted.size() < count && polls < 1000 && System.nanoTime() < deadline; polls++) {
                Set<String> batch = new HashSet<>();
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    received++;
                    batch.add(r.value());
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                var result = consumer.commitSync();
                long failed = result.values().stream().filter(o -> o.isPresent()).count();
                if (failed == 0) {
                    accepted.addAll(batch);
                } else {
                    ackErrors += (int) failed;
                }
            }
        }
        boolean ok = accepted.size() == count && received == count && ackErrors == 0;
        System.out.println("OLD-CLIENT-SMOKE version=" + AppInfoParser.getVersion() + " produced=" + count
                + " received=" + received + " accepted=" + accepted.size() + " ackErrors=" + ackErrors
                + " result=" + (ok ? "OK" : "FAILED"));
        System.exit(ok ? 0 : 1);
    }
}
