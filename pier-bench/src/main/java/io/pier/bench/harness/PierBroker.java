package io.pier.bench.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** Pier started from its CLI entry point, with one durability mode. */
final class PierBroker extends BrokerProcess {
    private final String classpath;
    private final String durability;

    PierBroker(String name, List<String> jvmFlags, Path workDir, String classpath, String durability)
            throws IOException {
        super(name, jvmFlags, workDir);
        this.classpath = classpath;
        this.durability = durability;
    }

    @Override
    void prepare() {}

    @Override
    List<String> command() {
        return List.of("-cp", classpath, "io.pier.cli.Main", "start",
                "--port", Integer.toString(port),
                "--data-dir", workDir.resolve("data").toString(),
                "--set", "pier.log.durability=" + durability);
    }
}
