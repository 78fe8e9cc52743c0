package io.pier.group;

import org.apache.kafka.common.protocol.Errors;

/**
 * The outcome of altering one group's configs: {@link Errors#NONE}, {@link Errors#INVALID_CONFIG}
 * with a message naming the setting, or {@link Errors#INVALID_REQUEST} for an empty group id.
 */
public record AlterConfigResult(Errors error, String errorMessage) {

    static final AlterConfigResult OK = new AlterConfigResult(Errors.NONE, null);
}
