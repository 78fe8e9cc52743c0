package io.pier.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The strings of Pier's state records: an int16 byte length, then UTF-8 (ids and topic names). */
final class ShortStrings {
    private ShortStrings() {}

    /** Writes {@code utf8}; {@code what} names it in the error if it is longer than an int16 allows. */
    static void put(ByteBuffer b, byte[] utf8, String what) {
        if (utf8.length > Short.MAX_VALUE) {
            throw new IllegalArgumentException(what + " too long: " + utf8.length + " bytes");
        }
        b.putShort((short) utf8.length);
        b.put(utf8);
    }

    /** Reads one, refusing a length that is negative or runs past the buffer (a damaged record). */
    static String get(ByteBuffer b) {
        short len = b.getShort();
        if (len < 0 || len > b.remaining()) {
            throw new IllegalArgumentException("bad string length " + len);
        }
        byte[] bytes = new byte[len];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
