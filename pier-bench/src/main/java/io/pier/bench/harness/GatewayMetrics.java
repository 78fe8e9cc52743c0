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

    private static final Pattern END = Pattern.compile(
            "^pier_(log_end_offset|share_end_offset)\\{([^}]*)\\}\\s+(\\S+)", Pattern.MULTILINE);

    /**
     * For {@code topic}, summed over its partitions and the nodes: the end of the local mirrors
     * ({@code pier_log_end_offset}: what has been fetched from the upstream so far) and the end of
     * the share-partitions ({@code pier_share_end_offset}: how far they have handed records out).
     */
    static long[] mirrorAndShareEnds(GatewayDeployment d, String topic) {
        long[] out = new long[2];
        String label = "topic=\"" + topic + "\"";
        for (PierGateway node : d.nodes()) {
            Matcher m = END.matcher(node.metrics());
            while (m.find()) {
                if (m.group(2).contains(label)) {
                    out[m.group(1).equals("log_end_offset") ? 0 : 1] += (long) Double.parseDouble(m.group(3));
                }
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
