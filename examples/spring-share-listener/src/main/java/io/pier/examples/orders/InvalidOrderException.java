package io.pier.examples.orders;

/** An order that can never be processed, however often it is tried: the listener rejects it. */
public class InvalidOrderException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidOrderException(String message) {
        super(message);
    }
}
