package io.pier.group;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;

/** Reads group settings from the broker's properties, with a message naming the setting. */
public final class BrokerSettings {
    private BrokerSettings() {}

    /** The integer setting {@code name}, or {@code fallback} when it is not set. */
    public static int intOf(Map<String, String> props, String name, int fallback) {
        String v = props.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(name + " must be an integer, got '" + v + "'");
        }
    }
}
