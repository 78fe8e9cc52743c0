package io.pier.log;

import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;

/**
 * Bytes the calling thread allocated, for fuzz targets that bound what an input may make the
 * broker allocate (a small multiple of its own size, not what a length field in it claims).
 *
 * <p>Loading a class allocates too, and while fuzzing Jazzer instruments each class on the thread
 * that loads it (tens of MB for the first input down a new path), so a reading taken while
 * classes were loaded says nothing: {@link Reading#classesLoaded()} tells, and the target runs
 * the input again to measure it.
 */
public final class AllocationMeter {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final ClassLoadingMXBean CLASSES = ManagementFactory.getClassLoadingMXBean();

    private AllocationMeter() {}

    /** Starts a reading on the calling thread. */
    public static Reading start() {
        return new Reading(THREADS.getCurrentThreadAllocatedBytes(), CLASSES.getTotalLoadedClassCount());
    }

    /** What the calling thread allocated since {@link #start()}. */
    public static final class Reading {
        private final long startBytes;
        private final long startClasses;

        private Reading(long startBytes, long startClasses) {
            this.startBytes = startBytes;
            this.startClasses = startClasses;
        }

        public long bytes() {
            return THREADS.getCurrentThreadAllocatedBytes() - startBytes;
        }

        public boolean classesLoaded() {
            return CLASSES.getTotalLoadedClassCount() != startClasses;
        }
    }
}
