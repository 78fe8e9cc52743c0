package io.pier.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One scrape of a Prometheus text endpoint, parsed into samples. Just enough of the format for Pier's own. */
final class MetricsScrape {
    /** One line of the exposition: a metric name, its labels and its value. */
    record Sample(String name, Map<String, String> labels, double value) {}

    private final List<Sample> samples;

    private MetricsScrape(List<Sample> samples) {
        this.samples = samples;
    }

    static MetricsScrape fetch(String url, Duration timeout) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                .header("Accept", "text/plain; version=0.0.4").GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("HTTP " + response.statusCode());
        }
        return parse(response.body());
    }

    static MetricsScrape parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            samples.add(parseLine(l));
        }
        return new MetricsScrape(samples);
    }

    private static Sample parseLine(String line) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        Map<String, String> labels = new LinkedHashMap<>();
        String name;
        int rest;
        if (brace >= 0 && (space < 0 || brace < space)) {
            name = line.substring(0, brace);
            rest = parseLabels(line, brace + 1, labels);
        } else {
            name = line.substring(0, space);
            rest = space;
        }
        String[] tail = line.substring(rest).strip().split("\\s+");
        return new Sample(name, labels, parseValue(tail[0]));
    }

    /** Reads {@code k="v",...}} from {@code i}; returns the index after the closing brace. */
    private static int parseLabels(String line, int i, Map<String, String> labels) {
        while (i < line.length() && line.charAt(i) != '}') {
            int eq = line.indexOf('=', i);
            String key = line.substring(i, eq).strip();
            StringBuilder value = new StringBuilder();
            int j = eq + 2; // past ="
            while (line.charAt(j) != '"') {
                char c = line.charAt(j);
                if (c == '\\') {
                    char next = line.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(c);
                }
                j++;
            }
            labels.put(key, value.toString());
            i = j + 1;
            if (i < line.length() && line.charAt(i) == ',') {
                i++;
            }
        }
        return i + 1;
    }

    private static double parseValue(String s) {
        switch (s) {
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                return Double.parseDouble(s);
        }
    }

    /** Samples of {@code name} whose labels include every entry of {@code match}. */
    List<Sample> find(String name, Map<String, String> match) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (s.name().equals(name) && s.labels().entrySet().containsAll(match.entrySet())) {
                out.add(s);
            }
        }
        return out;
    }

    /** The value of the one sample of {@code name} matching {@code match}, or NaN if there is none. */
    double value(String name, Map<String, String> match) {
        List<Sample> found = find(name, match);
        return found.isEmpty() ? Double.NaN : found.get(0).value();
    }
}
