package io.pier.it.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/**
 * The child JVM of {@link ConsumerFailureIT}: a real explicit-mode share consumer, as an
 * application would run one, that ACCEPTs every record it gets after working on each poll for
 * {@code workMs}, one commit per poll. The test ends it in one of three ways:
 * <ul>
 *   <li>{@code stop} on its standard input (or its input closed): it drops the work in hand
 *       without acknowledging it and closes the consumer, which gives those records back to the
 *       group, and exits 0;
 *   <li>SIGTERM: the same, from a shutdown hook, as an application stops on a clean shutdown; the
 *       JVM then exits 143;
 *   <li>SIGKILL: it is gone at once, without a word to the broker.
 * </ul>
 * {@code hold} on its standard input makes it hold its next non-empty poll unacknowledged until it
 * is ended, so that the test knows it dies holding records.
 *
 * <p>It reports on standard output, one line each, with its wall-clock time ({@code @ms}) last:
 * {@code DELIVERED offset count}; {@code HOLDING offset...}; from the acknowledgement-commit
 * callback, for each offset, {@code CONFIRMED offset count} or {@code REFUSED offset count
 * ExceptionClass}, where count is the delivery count of the delivery that was acknowledged;
 * {@code TERM} when the shutdown hook starts; {@code DROPPED offset...} for the records it closes
 * on without acknowledging; {@code CLOSED} once the consumer is closed. It stops after two minutes
 * in any case.
 */
public final class AcceptingShareConsumer {
    static final String HOLD = "hold";
    static final String STOP = "stop";
    private static final Duration MAX_LIFE = Duration.ofMinutes(2);

    private AcceptingShareConsumer() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        long workMs = Long.parseLong(args[3]);
        CountDownLatch stop = new CountDownLatch(1);
        AtomicBoolean holdNext = new AtomicBoolean();
        Thread commands = new Thread(() -> readCommands(holdNext, stop), "commands");
        commands.setDaemon(true);
        commands.start();
        CountDownLatch closed = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (closed.getCount() == 0) {
                return;
            }
            // SIGTERM: the consumer is not thread-safe, so its own thread closes it; the JVM
            // waits here (bounded) until it has.
            say("TERM");
            stop.countDown();
            try {
                main.join(Duration.ofSeconds(30).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "clean-shutdown"));

        // The delivery count of each offset's latest delivery here: the callback names offsets only.
        Map<Long, Short> counts = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + MAX_LIFE.toNanos();
        try (KafkaShareConsumer<String, String> consumer = PausableShareConsumer.consumer(bootstrap, group, null)) {
            PausableShareConsumer.reportCommits(consumer, counts);
            consumer.subscribe(Set.of(topic));
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
                if (holdNext.getAndSet(false)) {
                    say("HOLDING " + offsets(got));
                    stop.await(MAX_LIFE.toMillis(), TimeUnit.MILLISECONDS);
                } else if (workMs > 0) {
                    stop.await(workMs, TimeUnit.MILLISECONDS);
                }
                if (stop.getCount() == 0) {
                    // Shutting down mid-work: the work is dropped, and close hands the records back.
                    say("DROPPED " + offsets(got));
                    break;
                }
                got.forEach(r -> consumer.acknowledge(r, AcknowledgeType.ACCEPT));
                // Invokes the callback above with the broker's answer before it returns.
                consumer.commitSync(Duration.ofSeconds(30));
            }
        }
        say("CLOSED");
        closed.countDown();
    }

    private static String offsets(List<ConsumerRecord<String, String>> records) {
        return String.join(" ", records.stream().map(r -> Long.toString(r.offset())).toList());
    }

    private static void readCommands(AtomicBoolean holdNext, CountDownLatch stop) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (HOLD.equals(line.trim())) {
                    holdNext.set(true);
                } else if (STOP.equals(line.trim())) {
                    break;
                }
            }
        } catch (IOException e) {
            // the test went away: stop
        }
        stop.countDown();
    }

    private static void say(String event) {
        PausableShareConsumer.say(event);
    }
}
