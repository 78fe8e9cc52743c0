package io.pier.log;

import java.lang.management.ManagementFactory;

/**
 * Bytes the calling thread allocated, for fuzz targets that bound what an input may make the
 * broker allocate (a small multiple of its own size, not what a length field in it claims).
 */
public final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private AllocationMeter() {}

    /** A running total for the calling thread; subtract two readings. */
    public static long allocatedBytes() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }
}
