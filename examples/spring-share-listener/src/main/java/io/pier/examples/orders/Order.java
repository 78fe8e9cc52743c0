package io.pier.examples.orders;

/**
 * One order: the record key is its id, the value {@code sku,quantity}.
 *
 * @param id the order id, also the record key
 * @param sku the article ordered
 * @param quantity how many, at least 1
 */
public record Order(String id, String sku, int quantity) {
    public Order {
        if (id == null || id.isBlank() || sku == null || sku.isBlank() || sku.contains(",") || quantity < 1) {
            throw new InvalidOrderException("not a valid order: id=" + id + ", sku=" + sku + ", quantity=" + quantity);
        }
    }

    /** The order in a record, or {@link InvalidOrderException} when the value is not {@code sku,quantity}. */
    public static Order parse(String id, String value) {
        String[] fields = value == null ? new String[0] : value.split(",", -1);
        if (fields.length != 2) {
            throw new InvalidOrderException("order " + id + ": expected sku,quantity but got " + value);
        }
        try {
            return new Order(id, fields[0].trim(), Integer.parseInt(fields[1].trim()));
        } catch (NumberFormatException e) {
            throw new InvalidOrderException("order " + id + ": quantity is not a number: " + fields[1]);
        }
    }

    /** The record value. */
    public String value() {
        return sku + "," + quantity;
    }
}
