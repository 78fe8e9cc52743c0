package io.pier.examples.orders;

import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings under {@code orders.}.
 *
 * @param topic the topic orders are written to and read from
 * @param group the share group the listeners join
 * @param deadLetterTopic where the broker puts the orders a listener rejects (KIP-1191)
 * @param flakySkus SKUs whose first reservation the stand-in warehouse fails, as a remote stock
 *     service does while it restarts
 */
@ConfigurationProperties("orders")
public record OrdersProperties(String topic, String group, String deadLetterTopic, Set<String> flakySkus) {
    public OrdersProperties {
        flakySkus = flakySkus == null ? Set.of() : Set.copyOf(flakySkus);
    }
}
