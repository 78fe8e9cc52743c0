package io.pier.it.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pier.testkit.PierExtension;
import java.time.Duration;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.GroupMaxSizeReachedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** group.share.max.size: a member beyond it is refused, fatally for that consumer. */
@Timeout(90)
class ShareGroupMaxSizeIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.share.max.size", "2");

    private final ShareClients clients = new ShareClients(PIER.bootstrapServers());

    @Test
    void shouldFailThirdConsumerWithGroupMaxSizeReached() throws Exception {
        clients.createTopicReadFromEarliest("max-size", 2, "g-max");
        try (ShareGroupRun run = new ShareGroupRun(clients, "g-max", "max-size", 2, Duration.ofSeconds(80));
                KafkaProducer<String, String> producer = clients.singleRecordBatchProducer()) {
            ShareGroupRun.Member a = run.start();
            ShareGroupRun.Member b = run.start();
            // Both members have joined once each has been assigned and got records.
            int produced = 0;
            for (int w = 0; w < 40 && (a.count() == 0 || b.count() == 0); w++) {
                clients.produceSpread(producer, "max-size", 2, "m" + w, 0, 10);
                produced += 10;
                run.awaitAccepted(produced, Duration.ofSeconds(30));
            }
            assertThat(a.count()).isPositive();
            assertThat(b.count()).isPositive();

            Throwable thrown;
            try (KafkaShareConsumer<String, String> third = clients.consumer("g-max", "explicit")) {
                third.subscribe(Set.of("max-size"));
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                thrown = catchThrowable(() -> {
                    for (int i = 0; i < 300 && System.nanoTime() < deadline; i++) {
                        third.poll(Duration.ofMillis(100));
                    }
                });
            }
            assertThat(thrown).isInstanceOf(GroupMaxSizeReachedException.class);

            // The two members are unaffected.
            clients.produceSpread(producer, "max-size", 2, "after", 0, 10);
            run.awaitAccepted(produced + 10, Duration.ofSeconds(30));
            run.close();
            assertThat(run.errors()).isEmpty();
        }
    }
}
