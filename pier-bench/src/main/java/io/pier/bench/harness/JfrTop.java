package io.pier.bench.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a JVM's CPU time went, from a JFR recording's {@code jdk.ExecutionSample} events: the
 * hottest leaf frames, the nearest Pier frame of each sample (what Pier code the time is spent
 * under), and the busiest threads. Also the GC pause total.
 *
 * <p>Usage: {@code JfrTop <recording.jfr> [top N]}.
 */
public final class JfrTop {
    private JfrTop() {}

    public static void main(String[] args) throws IOException {
        System.out.println(summarize(Path.of(args[0]), args.length > 1 ? Integer.parseInt(args[1]) : 15));
    }

    static String summarize(Path file, int top) throws IOException {
        Map<String, Integer> leaf = new HashMap<>();
        Map<String, Integer> pier = new HashMap<>();
        Map<String, Integer> threads = new HashMap<>();
        int samples = 0;
        int pauses = 0;
        Duration pauseTotal = Duration.ZERO;
        try (RecordingFile rf = new RecordingFile(file)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String type = e.getEventType().getName();
                if (type.equals("jdk.GCPhasePause")) {
                    pauses++;
                    pauseTotal = pauseTotal.plus(e.getDuration());
                    continue;
                }
                if (!type.equals("jdk.ExecutionSample")) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                if (st == null || st.getFrames().isEmpty()) {
                    continue;
                }
                samples++;
                List<RecordedFrame> frames = st.getFrames();
                leaf.merge(frameName(frames.get(0)), 1, Integer::sum);
                String nearestPier = "(no Pier frame)";
                for (RecordedFrame f : frames) {
                    if (f.getMethod().getType().getName().startsWith("io.pier.")) {
                        nearestPier = frameName(f);
                        break;
                    }
                }
                pier.merge(nearestPier, 1, Integer::sum);
                RecordedThread t = e.getThread("sampledThread");
                String tn = t == null || t.getJavaName() == null ? "?" : t.getJavaName().replaceAll("\\d+", "N");
                threads.merge(tn, 1, Integer::sum);
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("Execution samples: ").append(samples).append("; GC pauses: ").append(pauses)
                .append(", ").append(pauseTotal.toMillis()).append(" ms in total\n\n");
        table(sb, "Hottest leaf frames (self time)", leaf, samples, top);
        table(sb, "Nearest Pier frame on the stack (time spent under it)", pier, samples, top);
        table(sb, "Threads", threads, samples, Math.min(top, 8));
        return sb.toString();
    }

    private static String frameName(RecordedFrame f) {
        String cls = f.getMethod().getType().getName();
        return cls.substring(cls.lastIndexOf('.') + 1) + "." + f.getMethod().getName()
                + " (" + cls.substring(0, Math.max(0, cls.lastIndexOf('.'))) + ")";
    }

    private static void table(StringBuilder sb, String title, Map<String, Integer> counts, int total, int top) {
        sb.append("| ").append(title).append(" | share |\n|---|---:|\n");
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(top)
                .forEach(en -> sb.append("| `").append(en.getKey()).append("` | ")
                        .append(String.format("%.1f%%", 100.0 * en.getValue() / Math.max(1, total)))
                        .append(" |\n"));
        sb.append('\n');
    }
}
