package io.pier.dlq;

/**
 * A redrive stopped before its end: the dead-letter topic does not exist, the broker did not
 * answer in time, another redrive of the same topic took over (fenced this one), a transaction
 * could not be committed. Every letter reported moved before it stays moved; the letters of the
 * transaction that was open are not, and a later run picks them up.
 */
public class RedriveException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RedriveException(String message) {
        super(message);
    }

    public RedriveException(String message, Throwable cause) {
        super(message, cause);
    }
}
