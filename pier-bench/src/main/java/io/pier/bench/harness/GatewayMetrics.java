package io.pier.bench.harness;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Figures read off the gateway nodes' Prometheus pages. */
final class GatewayMetrics {
    private GatewayMetrics() {}

    private static final Pattern DURATION = Pattern.compile(
            "^pier_request_duration_seconds_(sum|count)\\{api=\"([A-Za-z]+)\"[^}]*\\}\\s+(\\S+)", Pattern.MULTILINE);

    private static final Pattern LONG_POLL = Pattern.compile(
            "^pier_long_poll_answers_total\\{api=\"ShareFetch\",outcome=\"([a-z_]+)\"[^}]*\\}\\s+(\\S+)",
            Pattern.MULTILINE);

    /**
     * How the nodes' ShareFetch long polls were answered, summed: {@code at_once} (records to hand
     * out when it came), {@code woken} (it waited, then records came), {@code max_wait} (it waited
     * out its wait), {@code cut_short}.
     */
    static Map<String, Double> shareFetchAnswers(GatewayDeployment d) {
        Map<String, Double> out = new java.util.TreeMap<>();
        for (PierGateway node : d.nodes()) {
            Matcher m = LONG_POLL.matcher(node.metrics());
            while (m.find()) {
                out.merge(m.group(1), Double.parseDouble(m.group(2)), Double::sum);
            }
        }
        return out;
    }

    /** Per API, {sum of seconds, count} of {@code pier_request_duration_seconds}, summed over the nodes. */
    static Map<String, double[]> requestDurations(GatewayDeployment d) {
        Map<String, double[]> out = new HashMap<>();
        for (PierGateway node : d.nodes()) {
            Matcher m = DURATION.matcher(node.metrics());
            while (m.find()) {
                double[] v = out.computeIfAbsent(m.group(2), k -> new double[2]);
                v[m.group(1).equals("sum") ? 0 : 1] += Double.parseDouble(m.group(3));
            }
        }
        return out;
    }
}
