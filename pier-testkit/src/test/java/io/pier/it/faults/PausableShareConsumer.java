package io.pier.it.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The child JVM of {@link PausedConsumerIT} and {@link ConsumerPausedPastSessionIT}: a real
 * explicit-mode share consumer that ACCEPTs everything it gets, except that it holds its {@code
 * holdBatch}-th non-empty poll (counted from 1) without acknowledging until the test writes {@code
 * go} on its standard input. It stops when the test writes {@code stop} or closes its input, and
 * after two minutes in any case. Its arguments: bootstrap servers, topic, group, {@code
 * holdBatch}, and optionally a {@code client.id} (so that the test can find its member in the
 * group's description and its requests on the wire).
 *
 * <p>It reports on standard output, one line each, with its wall-clock time ({@code @ms}) last,
 * what the test's oracle needs: {@code DELIVERED offset count}; {@code HOLDING offset...}; and from
 * the acknowledgement-commit callback, for each offset, {@code CONFIRMED offset count} or {@code
 * REFUSED offset count ExceptionClass}, where count is the delivery count of the delivery that was
 * acknowledged.
 */
public final class PausableShareConsumer {
    static final String GO = "go";
    static final String STOP = "stop";
    private static final Duration MAX_LIFE = Duration.ofMinutes(2);

    private PausableShareConsumer() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int holdBatch = Integer.parseInt(args[3]);
        String clientId = args.length > 4 ? args[4] : null;
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch stop = new CountDownLatch(1);
        Thread commands = new Thread(() -> readCommands(go, stop), "commands");
        commands.setDaemon(true);
        commands.start();

        // The delivery count of each offset's latest delivery here: the callback names offsets only.
        Map<Long, Short> counts = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + MAX_LIFE.toNanos();
        try (KafkaShareConsumer<String, String> consumer = consumer(bootstrap, group, clientId)) {
            reportCommits(consumer, counts);
            consumer.subscribe(Set.of(topic));
            int batches = 0;
            while (stop.getCount() > 0 && System.nanoTime() < deadline) {
                List<ConsumerRecord<String, String>> got = new ArrayList<>();
                consumer.poll(Duration.ofMillis(200)).forEach(got::add);
                if (got.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<String, String> r : got) {
                    short count = r.deliveryCount().orElse((short) -1);
                    counts.put(r.offset(), count);
                    say("DELIVERED " + r.offset() + " " + count);
                }
                if (++batches == holdBatch) {
                    // Stands for a consumer stuck in its processing: the test pauses the whole JVM
                    // here, past the records' lock, and lets it go on afterwards.
                    say("HOLDING " + String.join(" ", got.stream().map(r -> Long.toString(r.offset())).toList()));
                    go.await(MAX_LIFE.toMillis(), TimeUnit.MILLISECONDS);
                }
                got.forEach(r -> consumer.acknowledge(r, AcknowledgeType.ACCEPT));
                // Invokes the callback above with the broker's answer before it returns.
                consumer.commitSync(Duration.ofSeconds(30));
            }
        }
        say("CLOSED");
    }

    /**
     * An explicit-mode share consumer acquiring at most the 10 records a poll hands to the
     * application; also what {@link AcceptingShareConsumer} runs. A null {@code clientId} leaves the
     * client its own.
     */
    static KafkaShareConsumer<String, String> consumer(String bootstrap, String group, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        if (clientId != null) {
            p.put("client.id", clientId);
        }
        p.put("share.acknowledgement.mode", "explicit");
        // Small acquisitions, all handed to the application: what it holds is all that is locked for it.
        p.put("max.poll.records", "10");
        p.put("share.acquire.mode", "record_limit");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static void readCommands(CountDownLatch go, CountDownLatch stop) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (GO.equals(line.trim())) {
                    go.countDown();
                } else if (STOP.equals(line.trim())) {
                    break;
                }
            }
        } catch (IOException e) {
            // the test went away: stop
        }
        go.countDown();
        stop.countDown();
    }

    /**
     * Reports what the acknowledgement-commit callback says of each offset: {@code CONFIRMED offset
     * count} or {@code REFUSED offset count ExceptionClass}, count being that of the delivery
     * acknowledged, as {@code counts} noted it. Also what {@link AcceptingShareConsumer} reports.
     */
    static void reportCommits(KafkaShareConsumer<String, String> consumer, Map<Long, Short> counts) {
        consumer.setAcknowledgementCommitCallback((offsets, exception) -> offsets.values().forEach(set ->
                set.stream().sorted().forEach(o -> say(exception == null
                        ? "CONFIRMED " + o + " " + counts.get(o)
                        : "REFUSED " + o + " " + counts.get(o) + " " + exception.getClass().getSimpleName()))));
    }

    /** One report line on standard output, with the wall-clock time; both child consumers' lines. */
    static synchronized void say(String event) {
        System.out.println(ChildShareConsumer.EVENT + event + " @" + System.currentTimeMillis());
        System.out.flush();
    }
}
