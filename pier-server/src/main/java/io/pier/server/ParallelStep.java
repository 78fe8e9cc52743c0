package io.pier.server;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * A step of the broker's start-up run on a thread of its own while the starting thread does
 * another that needs nothing from it. {@link #join} waits for the result or rethrows the step's
 * failure; the step keeps owning the result, and {@link #close} closes it (waiting for it first if
 * it is still being made), so a start that fails at any point leaves no threads behind.
 */
final class ParallelStep<T extends AutoCloseable> implements AutoCloseable {
    private final FutureTask<T> task;
    /** Set by {@link #join}: whoever joined has been told of a failure, close need not repeat it. */
    private boolean joined;

    private ParallelStep(FutureTask<T> task) {
        this.task = task;
    }

    /** Starts {@code work} on a new daemon thread called {@code threadName}. */
    static <T extends AutoCloseable> ParallelStep<T> start(String threadName, Callable<T> work) {
        ParallelStep<T> step = new ParallelStep<>(new FutureTask<>(work));
        Thread thread = new Thread(step.task, threadName);
        thread.setDaemon(true);
        thread.start();
        return step;
    }

    /** The step's result, once it is there; its failure as thrown. */
    T join() throws Exception {
        joined = true;
        try {
            return task.get();
        } catch (ExecutionException e) {
            throw rethrowable(e);
        }
    }

    @Override
    public void close() throws Exception {
        T result;
        try {
            result = task.get();
        } catch (ExecutionException e) {
            if (joined) {
                return;
            }
            throw rethrowable(e);
        }
        result.close();
    }

    private static Exception rethrowable(ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Error error) {
            throw error;
        }
        return cause instanceof Exception exception ? exception : e;
    }
}
