package io.pier.examples.orders;

import io.pier.examples.orders.ProcessingLog.Delivery;
import io.pier.examples.orders.ProcessingLog.Outcome;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.support.ShareAcknowledgment;
import org.springframework.stereotype.Component;

/**
 * Takes orders from the share group and acknowledges each one explicitly:
 *
 * <pre>
 *   reserved in the warehouse     -> acknowledge()  ACCEPT   done
 *   warehouse unavailable         -> release()      RELEASE  delivered again, delivery count + 1
 *   not an order (poison)         -> reject()       REJECT   never again; the broker writes it to
 *                                                            orders.dead-letter-topic
 * </pre>
 *
 * A record released {@code share.delivery.count.limit} times (5 by default) is archived by the
 * broker, so a failure wrongly taken for a transient one cannot loop forever either. Runs on the
 * listener container's consumer thread.
 */
@Component
public class OrderListener {
    private static final Logger LOG = LoggerFactory.getLogger(OrderListener.class);
    private final Warehouse warehouse;
    private final ProcessingLog log;

    public OrderListener(Warehouse warehouse, ProcessingLog log) {
        this.warehouse = warehouse;
        this.log = log;
    }

    @KafkaListener(topics = "${orders.topic}", groupId = "${orders.group}",
            containerFactory = ShareListenerConfig.CONTAINER_FACTORY)
    public void onOrder(ConsumerRecord<String, String> record, ShareAcknowledgment acknowledgment) {
        int deliveryCount = record.deliveryCount().map(Short::intValue).orElse(1);
        Outcome outcome;
        try {
            Order order = Order.parse(record.key(), record.value());
            warehouse.reserve(order);
            acknowledgment.acknowledge();
            outcome = Outcome.ACCEPTED;
        } catch (WarehouseUnavailableException e) {
            LOG.warn("order {} (delivery {}): {}; released for another try", record.key(), deliveryCount, e.getMessage());
            acknowledgment.release();
            outcome = Outcome.RELEASED;
        } catch (InvalidOrderException e) {
            LOG.error("order {} at offset {} rejected: {}", record.key(), record.offset(), e.getMessage());
            acknowledgment.reject();
            outcome = Outcome.REJECTED;
        }
        log.add(new Delivery(record.key(), record.offset(), deliveryCount, outcome));
    }
}
