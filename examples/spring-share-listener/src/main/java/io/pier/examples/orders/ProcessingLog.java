package io.pier.examples.orders;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Component;

/** What the listener did with each delivery, in order; read by monitoring, and by the test. Thread-safe. */
@Component
public class ProcessingLog {
    /** How a delivery was acknowledged to the broker. */
    public enum Outcome {
        /** Done for good (AcknowledgeType.ACCEPT). */
        ACCEPTED,
        /** Handed back for another delivery (AcknowledgeType.RELEASE). */
        RELEASED,
        /** Never to be delivered again (AcknowledgeType.REJECT). */
        REJECTED
    }

    /**
     * One delivery of one record.
     *
     * @param orderId the record key
     * @param offset the record's offset
     * @param deliveryCount which delivery of that record this was, from 1
     * @param outcome how it was acknowledged
     */
    public record Delivery(String orderId, long offset, int deliveryCount, Outcome outcome) {}

    private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

    void add(Delivery delivery) {
        deliveries.add(delivery);
    }

    /** Every delivery so far, oldest first. */
    public List<Delivery> deliveries() {
        return List.copyOf(deliveries);
    }
}
