package io.pier.examples.orders;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/**
 * Stands in for a remote stock service. The first reservation of each SKU in
 * {@code orders.flaky-skus} fails with {@link WarehouseUnavailableException}, as a call does while
 * that service restarts; every later one succeeds. Thread-safe.
 */
@Component
public class Warehouse {
    private final Set<String> flakySkus;
    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

    public Warehouse(OrdersProperties properties) {
        this.flakySkus = properties.flakySkus();
    }

    /** Reserves the order's articles, or throws {@link WarehouseUnavailableException}. */
    public void reserve(Order order) {
        if (flakySkus.contains(order.sku()) && failedOnce.add(order.sku())) {
            throw new WarehouseUnavailableException("warehouse timed out reserving " + order.sku());
        }
    }
}
