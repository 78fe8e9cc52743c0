package io.pier.bench.harness;

/** Samples a process's VmRSS every 200 ms while a workload runs; keeps the peak. */
final class RssSampler implements AutoCloseable {
    private final Thread thread;
    private volatile boolean running = true;
    private volatile double peakMiB;

    RssSampler(long pid) {
        thread = new Thread(() -> {
            while (running) {
                double rss = BrokerProcess.rssMiB(pid);
                if (rss > peakMiB) {
                    peakMiB = rss;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "rss-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    double peakMiB() {
        return peakMiB;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(1000);
    }
}
