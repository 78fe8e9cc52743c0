package io.pier.examples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * An order-processing service: {@link OrderPublisher} writes orders to a topic with Spring's
 * {@code KafkaTemplate}, and {@link OrderListener} takes them from a share group (KIP-932), so any
 * number of instances can share one partition, acknowledging each order on its own. Bootstrap
 * servers come from {@code spring.kafka.bootstrap-servers}; the rest from {@link OrdersProperties}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class OrdersApplication {
    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }
}
