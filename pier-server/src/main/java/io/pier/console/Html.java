package io.pier.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * Builds a page's HTML. Every text and attribute value from outside (topic and group names,
 * member and client ids, hosts) goes through {@link #escape}: a name may hold {@code <}, quotes
 * or {@code &}. Tables carry machine-readable figures: each row a {@code data-key}, each cell a
 * {@code data-field}, and numeric cells their exact value in {@code data-value}.
 */
final class Html {
    /** A table column: its heading and whether it holds numbers (aligned right). */
    record Column(String label, boolean numeric) {
        static Column text(String label) {
            return new Column(label, false);
        }

        static Column num(String label) {
            return new Column(label, true);
        }
    }

    private final StringBuilder out = new StringBuilder(8192);

    /** {@code s} with the five characters that mean something in HTML text and attributes escaped. */
    static String escape(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String r = switch (c) {
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '&' -> "&amp;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> null;
            };
            if (r != null && b == null) {
                b = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            if (b != null) {
                if (r != null) {
                    b.append(r);
                } else {
                    b.append(c);
                }
            }
        }
        return b == null ? s : b.toString();
    }

    /** The link to {@code path} for the group {@code id}, URL-encoded (escape it again for an attribute). */
    static String href(String path, String id) {
        return path + "?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8);
    }

    /** Markup written as is: only constant strings, or markup built here. */
    Html raw(String markup) {
        out.append(markup);
        return this;
    }

    Html text(String s) {
        out.append(escape(s));
        return this;
    }

    Html heading(int level, String text) {
        return raw("<h" + level + ">").text(text).raw("</h" + level + ">\n");
    }

    /** A paragraph of class {@code cls} holding {@code text}. */
    Html note(String cls, String text) {
        return raw("<p class=\"").raw(cls).raw("\">").text(text).raw("</p>\n");
    }

    /** A list of facts: label, value, label, value... */
    Html facts(String id, List<String> labelsAndValues) {
        raw("<dl class=\"facts\" id=\"").raw(id).raw("\">");
        for (int i = 0; i + 1 < labelsAndValues.size(); i += 2) {
            raw("<dt>").text(labelsAndValues.get(i)).raw("</dt><dd>").text(labelsAndValues.get(i + 1)).raw("</dd>");
        }
        return raw("</dl>\n");
    }

    Html startTable(String id, List<Column> columns) {
        raw("<table id=\"").raw(id).raw("\"><thead><tr>");
        for (Column c : columns) {
            raw(c.numeric() ? "<th class=\"num\">" : "<th>").text(c.label()).raw("</th>");
        }
        return raw("</tr></thead><tbody>\n");
    }

    Html startRow(String key) {
        return raw("<tr data-key=\"").text(key).raw("\">");
    }

    Html endRow() {
        return raw("</tr>\n");
    }

    /** Closes the table; with no rows, says {@code emptyMessage} in a row of its own. */
    Html endTable(int rows, int columns, String emptyMessage) {
        if (rows == 0) {
            raw("<tr class=\"empty\"><td colspan=\"").raw(String.valueOf(columns)).raw("\">").text(emptyMessage)
                    .raw("</td></tr>\n");
        }
        return raw("</tbody></table>\n");
    }

    Html cell(String field, String text) {
        return raw("<td data-field=\"").raw(field).raw("\">").text(text).raw("</td>");
    }

    Html number(String field, long value) {
        return numberCell(field, value, String.valueOf(value));
    }

    Html bytes(String field, long value) {
        return numberCell(field, value, bytes(value));
    }

    Html ageMs(String field, long valueMs) {
        return numberCell(field, valueMs, age(valueMs));
    }

    Html rate(String field, double perSecond) {
        String text = String.format(Locale.ROOT, "%.1f", perSecond);
        return raw("<td class=\"num\" data-field=\"").raw(field).raw("\" data-value=\"").raw(text).raw("\">")
                .raw(text).raw("</td>");
    }

    Html link(String field, String href, String text) {
        return raw("<td data-field=\"").raw(field).raw("\"><a href=\"").text(href).raw("\">").text(text)
                .raw("</a></td>");
    }

    private Html numberCell(String field, long value, String text) {
        return raw("<td class=\"num\" data-field=\"").raw(field).raw("\" data-value=\"").raw(String.valueOf(value))
                .raw("\">").text(text).raw("</td>");
    }

    /** {@code n} bytes for people: B, KiB, MiB, GiB. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /** A duration for people: ms, s, min, h. */
    static String age(long ms) {
        if (ms < 1_000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
        }
        if (ms < 3_600_000) {
            return String.format(Locale.ROOT, "%.1f min", ms / 60_000.0);
        }
        return String.format(Locale.ROOT, "%.1f h", ms / 3_600_000.0);
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
