package io.pier.it.share;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of a Prometheus text endpoint over HTTP, for tests; label order does not matter. */
public final class ScrapedMetrics {
    private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private record Sample(String name, Map<String, String> labels, double value) {}

    private final String text;
    private final List<Sample> samples = new ArrayList<>();

    private ScrapedMetrics(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            Matcher m = LINE.matcher(line);
            if (line.startsWith("#") || !m.find()) {
                continue;
            }
            Map<String, String> labels = new HashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4).replace("+Inf", "Infinity"))));
        }
    }

    public static ScrapedMetrics scrape(int port) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("HTTP " + response.statusCode() + " from the metrics endpoint");
        }
        return new ScrapedMetrics(response.body());
    }

    /**
     * Every node's samples together (a gateway's nodes each export what they serve): read them with
     * {@link #sum}, as one node's series may be on another after a takeover.
     */
    public static ScrapedMetrics scrape(List<Integer> ports) throws IOException, InterruptedException {
        StringBuilder all = new StringBuilder();
        for (int port : ports) {
            all.append(scrape(port).text).append('\n');
        }
        return new ScrapedMetrics(all.toString());
    }

    /**
     * A metric of {@code pier}'s share-partitions: the one sample's value on a broker ({@link
     * #value}: NaN if absent); on several gateway nodes, the sum over every node's samples (0 if
     * none has it), since only the node serving a share-partition counts for it.
     */
    public static double of(io.pier.testkit.PierExtension pier, String name, String... labelPairs)
            throws IOException, InterruptedException {
        if (!io.pier.testkit.PierExtension.multiNodeGateway()) {
            return scrape(pier.pier().metricsPort()).value(name, labelPairs);
        }
        return scrape(pier.metricsPorts()).sum(name, labelPairs);
    }

    /** The value of the one sample named {@code name} with these labels (key, value, ...); NaN if absent. */
    public double value(String name, String... labelPairs) {
        Map<String, String> want = new HashMap<>();
        for (int i = 0; i + 1 < labelPairs.length; i += 2) {
            want.put(labelPairs[i], labelPairs[i + 1]);
        }
        List<Sample> found = samples.stream()
                .filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(want.entrySet()))
                .toList();
        if (found.size() > 1) {
            throw new IllegalArgumentException(found.size() + " samples of " + name + " match " + want);
        }
        return found.isEmpty() ? Double.NaN : found.get(0).value();
    }


    /** The sum of every sample named {@code name} with these labels (key, value, ...); 0 if none. */
    public double sum(String name, String... labelPairs) {
        Map<String, String> want = new HashMap<>();
        for (int i = 0; i + 1 < labelPairs.length; i += 2) {
            want.put(labelPairs[i], labelPairs[i + 1]);
        }
        return samples.stream()
                .filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(want.entrySet()))
                .mapToDouble(Sample::value).sum();
    }

    /** The HELP / TYPE line of a metric family, for checking types. */
    public boolean declares(String typeLine) {
        return text.lines().anyMatch(typeLine::equals);
    }

    @Override
    public String toString() {
        return text;
    }
}
