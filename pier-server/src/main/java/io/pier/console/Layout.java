package io.pier.console;

/**
 * The frame around every page: title, navigation, the stylesheet and script the broker serves
 * itself ({@code /console.css}, {@code /console.js}), and the {@code main} element the script
 * reloads in place every {@code data-refresh-ms}.
 */
final class Layout {
    /** The navigation's entries. */
    enum Section {
        OVERVIEW("/", "Overview"),
        SHARE_GROUPS("/share-groups", "Share groups"),
        CONSUMER_GROUPS("/consumer-groups", "Consumer groups"),
        NONE("", "");

        final String path;
        final String label;

        Section(String path, String label) {
            this.path = path;
            this.label = label;
        }
    }

    private Layout() {}

    /**
     * The whole page.
     *
     * @param body the content, built with {@link Html} (so already escaped)
     * @param refreshMs how often the script reloads the content; 0 never
     */
    static String page(String title, Section section, String principal, long refreshMs, Html body) {
        Html out = new Html();
        out.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .raw("<title>").text(title + " - Pier").raw("</title>")
                .raw("<link rel=\"icon\" href=\"/favicon.svg\" type=\"image/svg+xml\">")
                .raw("<link rel=\"stylesheet\" href=\"/console.css\">")
                .raw("<script src=\"/console.js\" defer></script></head>\n")
                .raw("<body data-refresh-ms=\"" + refreshMs + "\"><header><span class=\"brand\">Pier</span><nav>");
        for (Section s : Section.values()) {
            if (s == Section.NONE) {
                continue;
            }
            out.raw("<a href=\"").raw(s.path).raw(s == section ? "\" class=\"active\">" : "\">").text(s.label)
                    .raw("</a>");
        }
        out.raw("<a href=\"/metrics\">Prometheus metrics</a></nav><span class=\"who\">as ").text(principal)
                .raw(" &middot; <span id=\"refresh-status\">live</span></span></header>\n")
                .raw("<main id=\"content\"><h1>").text(title).raw("</h1>\n")
                .raw(body.toString())
                .raw("</main></body></html>\n");
        return out.toString();
    }
}
