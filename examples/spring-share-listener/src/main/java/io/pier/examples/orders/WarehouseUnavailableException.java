package io.pier.examples.orders;

/** The warehouse did not answer; the same order may well go through later: the listener releases it. */
public class WarehouseUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WarehouseUnavailableException(String message) {
        super(message);
    }
}
