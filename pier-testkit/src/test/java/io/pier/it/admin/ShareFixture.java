package io.pier.it.admin;

import io.pier.it.share.ShareClients;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;

/** A share consumer run the admin tests use to move a group's start offset. */
final class ShareFixture {
    private final ShareClients clients;

    ShareFixture(ShareClients clients) {
        this.clients = clients;
    }

    /** How long nothing more is delivered before a run with fewer than acceptBelow records to accept ends. */
    private static final long QUIET_MS = 1_000;

    /**
     * Joins {@code group}, accepts the records below {@code acceptBelow} and releases the others
     * until {@code acceptBelow} records are accepted, or, once some are, until nothing more has
     * been delivered for a second (a group whose start offset was moved has fewer left to accept),
     * then leaves. Returns the offsets first delivered, in order.
     */
    List<Long> acceptBelow(String group, String topic, long acceptBelow) {
        List<Long> delivered = new java.util.ArrayList<>();
        long accepted = 0;
        try (KafkaShareConsumer<String, String> consumer = clients.consumer(group, "explicit")) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.currentTimeMillis() + 30_000;
            long lastDelivery = System.currentTimeMillis();
            while (accepted < acceptBelow && System.currentTimeMillis() < deadline) {
                var records = consumer.poll(Duration.ofMillis(200));
                if (!records.isEmpty()) {
                    lastDelivery = System.currentTimeMillis();
                } else if (accepted > 0 && System.currentTimeMillis() - lastDelivery >= QUIET_MS) {
                    break;
                }
                for (ConsumerRecord<String, String> r : records) {
                    if (r.deliveryCount().orElse((short) 0) == 1) {
                        delivered.add(r.offset());
                    }
                    boolean accept = r.offset() < acceptBelow;
                    consumer.acknowledge(r, accept ? AcknowledgeType.ACCEPT : AcknowledgeType.RELEASE);
                    accepted += accept ? 1 : 0;
                }
                consumer.commitSync();
            }
        }
        return delivered;
    }
}
