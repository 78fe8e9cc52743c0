package io.pier.service;

import io.pier.common.Agent;
import io.pier.common.ClosableInbox;
import io.pier.common.Wakeup;
import io.pier.log.LogFlush;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent that blocks on the disk for one shard: it forces the partition logs the shard hands
 * it, so that while an fsync runs the shard goes on serving fetches, share acquisitions and
 * acknowledgements.
 *
 * <pre>
 *   shard, end of its cycle ──submit(LogFlush)──▶ [queue] ──▶ doWork: LogFlush.force(), in order
 *                                                                     │ Forced
 *   shard's command queue (unbounded lane) ◀──── completion ◀────────┘
 * </pre>
 *
 * <p>It owns nothing but its queue and touches no log: a {@link LogFlush} carries the channels,
 * sizes and paths the shard captured, and what is learnt from the force goes back to the shard as
 * a command, where the log's state lives. One flusher per shard keeps the fsyncs of different
 * shards running side by side, as when each shard forced its own logs (two threads forcing two
 * files get about twice the fsyncs of one thread forcing both in turn), and keeps each flusher's
 * replies on one queue.
 *
 * <p>Stopping: {@link #onClose} forces what is still queued and sends its completions; once closed
 * it refuses new flushes, and the shard forces them itself. A completion whose shard has already
 * stopped is dropped: that shard failed what waited on it without acknowledging it.
 */
public final class Flusher implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(Flusher.class);
    /** Flushes forced per duty cycle; the rest wait for the next cycle, which follows at once. */
    private static final int MAX_PER_CYCLE = 256;

    private final int id;
    private final Wakeup wakeup;
    private final ClosableInbox<Request> requests = new ClosableInbox<>();

    /** What to force, and how the shard hears of it (called on the flusher's thread: it only queues a command). */
    private record Request(LogFlush flush, Consumer<LogFlush.Forced> done) {}

    /** @param wakeup how a submitted flush wakes the thread that runs this flusher */
    public Flusher(int id, Wakeup wakeup) {
        this.id = id;
        this.wakeup = wakeup;
    }

    @Override
    public String roleName() {
        return "pier-flusher-" + id;
    }

    /**
     * From any thread (the shard's): forces {@code flush} in a later duty cycle, then calls
     * {@code done} with the outcome. Never waits. False if the flusher has stopped: the caller
     * forces it itself.
     */
    public boolean submit(LogFlush flush, Consumer<LogFlush.Forced> done) {
        if (!requests.offer(new Request(flush, done))) {
            return false;
        }
        wakeup.wake();
        return true;
    }

    @Override
    public int doWork(long nowMs) {
        int n = 0;
        Request r;
        while (n < MAX_PER_CYCLE && (r = requests.poll()) != null) {
            force(r);
            n++;
        }
        return n;
    }

    private void force(Request r) {
        LogFlush.Forced forced = r.flush().force();
        try {
            r.done().accept(forced);
        } catch (RuntimeException e) {
            // The shard stopped taking commands: it has already failed what waited on this flush.
            LOG.debug("{}: the outcome of {} has no shard to go to", roleName(), r.flush(), e);
        }
    }

    /** After the last duty cycle: forces what is still queued, then refuses new flushes. */
    @Override
    public void onClose() {
        requests.close();
        Request r;
        while ((r = requests.poll()) != null) {
            force(r);
        }
    }
}
