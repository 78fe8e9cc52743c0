package io.pier.examples.orders;

import java.util.concurrent.CompletableFuture;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.support.SendResult;
import org.springframework.stereotype.Component;

/** Writes orders to {@code orders.topic} with the KafkaTemplate Spring Boot configures from {@code spring.kafka.producer.*}. */
@Component
public class OrderPublisher {
    private final KafkaTemplate<String, String> template;
    private final String topic;

    public OrderPublisher(KafkaTemplate<String, String> template, OrdersProperties properties) {
        this.template = template;
        this.topic = properties.topic();
    }

    /** Sends the order keyed by its id; completes once the broker has it. */
    public CompletableFuture<SendResult<String, String>> publish(Order order) {
        return template.send(topic, order.id(), order.value());
    }
}
