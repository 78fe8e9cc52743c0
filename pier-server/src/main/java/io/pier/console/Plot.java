package io.pier.console;

import java.util.Locale;

/**
 * A small line plot of one series, drawn on the server as inline SVG: no script and no external
 * asset. The {@code svg} element carries the number of samples and the last value
 * ({@code data-samples}, {@code data-last}) for tests and scripts.
 */
final class Plot {
    static final int WIDTH = 320;
    static final int HEIGHT = 90;
    private static final int TOP = 14;
    private static final int BOTTOM = 4;

    /** How a series' values read. */
    enum Unit {
        COUNT,
        MILLIS
    }

    private Plot() {}

    static void draw(Html out, String id, String title, RingBuffer.Samples s, Unit unit) {
        long last = s.size() == 0 ? 0 : s.value(s.size() - 1);
        out.raw("<figure class=\"plot\"><figcaption>").text(title).raw("</figcaption>");
        out.raw("<svg id=\"").raw(id).raw("\" class=\"plot\" viewBox=\"0 0 " + WIDTH + " " + HEIGHT + "\" width=\""
                + WIDTH + "\" height=\"" + HEIGHT + "\" role=\"img\" data-samples=\"" + s.size() + "\" data-last=\""
                + last + "\" aria-label=\"").text(title).raw("\">");
        out.raw("<rect class=\"frame\" x=\"0.5\" y=\"0.5\" width=\"" + (WIDTH - 1) + "\" height=\"" + (HEIGHT - 1)
                + "\"/>");
        if (s.size() < 2) {
            out.raw("<text class=\"waiting\" x=\"8\" y=\"" + (HEIGHT / 2) + "\">waiting for samples</text>");
        } else {
            long max = Math.max(1, s.max());
            out.raw("<text class=\"scale\" x=\"4\" y=\"11\">max ").text(format(max, unit)).raw("</text>");
            out.raw("<text class=\"scale end\" x=\"" + (WIDTH - 4) + "\" y=\"11\">now ").text(format(last, unit))
                    .raw("</text>");
            out.raw("<polyline class=\"line\" points=\"").raw(points(s, max)).raw("\"/>");
        }
        out.raw("</svg></figure>\n");
    }

    /** The polyline's points: time on x (first to last sample), value on y (0 at the bottom, max at the top). */
    static String points(RingBuffer.Samples s, long max) {
        long t0 = s.timeMs(0);
        long span = Math.max(1, s.timeMs(s.size() - 1) - t0);
        double plotHeight = HEIGHT - TOP - BOTTOM;
        StringBuilder b = new StringBuilder(s.size() * 12);
        for (int i = 0; i < s.size(); i++) {
            double x = 1 + (WIDTH - 2) * (double) (s.timeMs(i) - t0) / span;
            double y = HEIGHT - BOTTOM - plotHeight * s.value(i) / max;
            b.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        }
        return b.toString().trim();
    }

    private static String format(long v, Unit unit) {
        return unit == Unit.MILLIS ? Html.age(v) : String.valueOf(v);
    }
}
