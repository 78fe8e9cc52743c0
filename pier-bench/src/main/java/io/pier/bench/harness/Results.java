package io.pier.bench.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Every figure of every round, per metric and broker; medians on demand. */
final class Results {
    record Metric(String key, String label, String unit, boolean higherIsBetter) {}

    private final Map<String, Metric> metrics = new LinkedHashMap<>();
    private final Map<String, Map<String, List<Double>>> values = new LinkedHashMap<>();
    /** Per metric and broker, the rounds (indexes into its values) in which the broker could not run the workload. */
    private final Map<String, Map<String, Set<Integer>>> unavailable = new LinkedHashMap<>();
    /** Per metric and broker, why the broker refused the workload's settings, when it did. */
    private final Map<String, Map<String, String>> unsupported = new LinkedHashMap<>();

    void add(String key, String label, String unit, boolean higherIsBetter, String broker, double value) {
        metrics.putIfAbsent(key, new Metric(key, label, unit, higherIsBetter));
        values.computeIfAbsent(key, k -> new LinkedHashMap<>())
                .computeIfAbsent(broker, b -> new ArrayList<>()).add(value);
    }

    /**
     * A round in which the broker could not run the workload at all (the client failed: e.g. a
     * protocol the broker does not serve), shown as {@code n/a} rather than a missing figure.
     */
    void addUnavailable(String key, String label, String unit, boolean higherIsBetter, String broker) {
        add(key, label, unit, higherIsBetter, broker, Double.NaN);
        unavailable.computeIfAbsent(key, k -> new LinkedHashMap<>())
                .computeIfAbsent(broker, b -> new HashSet<>()).add(values(key, broker).size() - 1);
    }

    /**
     * A round in which the broker refused a setting the workload needs (a config it does not
     * support): shown as "not supported", and {@code reason} (empty: none, for a row under
     * another) is listed under the table.
     */
    void addUnsupported(String key, String label, String unit, boolean higherIsBetter, String broker, String reason) {
        addUnavailable(key, label, unit, higherIsBetter, broker);
        unsupported.computeIfAbsent(key, k -> new LinkedHashMap<>()).putIfAbsent(broker, reason);
    }

    /** Whether the broker has no figure for this metric because it refused the workload's settings. */
    boolean unsupported(String key, String broker) {
        return unavailable(key, broker) && unsupported.getOrDefault(key, Map.of()).containsKey(broker);
    }

    /** Per metric and broker, why the broker did not support the workload (the first round's reason; may be empty). */
    Map<String, Map<String, String>> unsupportedReasons() {
        return unsupported;
    }

    /** Whether round {@code index} of this metric and broker was one the broker could not run. */
    boolean unavailable(String key, String broker, int index) {
        return unavailable.getOrDefault(key, Map.of()).getOrDefault(broker, Set.of()).contains(index);
    }

    /** Whether the broker has no figure for this metric because it could not run it in any round it tried. */
    boolean unavailable(String key, String broker) {
        Set<Integer> failed = unavailable.getOrDefault(key, Map.of()).getOrDefault(broker, Set.of());
        return !failed.isEmpty() && Double.isNaN(median(key, broker));
    }

    List<Metric> metrics() {
        return List.copyOf(metrics.values());
    }

    Metric metric(String key) {
        return metrics.get(key);
    }

    /** Whether any figure was recorded for this broker. */
    boolean ran(String broker) {
        return values.values().stream().anyMatch(m -> m.containsKey(broker));
    }

    List<Double> values(String key, String broker) {
        return values.getOrDefault(key, Map.of()).getOrDefault(broker, List.of());
    }

    double median(String key, String broker) {
        List<Double> v = new ArrayList<>();
        for (double d : values(key, broker)) {
            if (!Double.isNaN(d)) {
                v.add(d);
            }
        }
        if (v.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    /**
     * Pier's advantage: above 1 Pier is better, below 1 worse, whichever way the metric points
     * (throughput ratio for higher-is-better, inverse ratio for times and memory).
     */
    double advantage(String key, String pier, String kafka) {
        double p = median(key, pier);
        double k = median(key, kafka);
        return metrics.get(key).higherIsBetter() ? p / k : k / p;
    }
}
