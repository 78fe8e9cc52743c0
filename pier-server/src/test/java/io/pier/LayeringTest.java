package io.pier;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import io.pier.common.Clock;
import io.pier.log.EngineLayeringViolation;
import io.pier.network.NetworkLayeringViolation;
import io.pier.protocol.LayeringViolations;
import io.pier.service.ShardOwnedViolations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The architecture (docs/architecture.md), checked on the compiled classes. Each rule is also
 * shown to fail: test-only fixtures in the real packages break it on purpose, and the main
 * check leaves test classes out.
 */
class LayeringTest {
    private static final JavaClasses PIER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar")) // the engine's test helpers
            .importPackages("io.pier");
    private static final JavaClasses VIOLATIONS = new ClassFileImporter()
            .importClasses(LayeringViolations.class, ShardOwnedViolations.class, EngineLayeringViolation.class,
                    NetworkLayeringViolation.class);

    private static final String[] ENGINE = {"io.pier.common..", "io.pier.log..", "io.pier.share..",
            "io.pier.group..", "io.pier.state..", "io.pier.txn.."};
    /** Code that runs on a shard (or any agent) and owns its state: the engine and the services. */
    private static final String[] SHARD_OWNED = {"io.pier.common..", "io.pier.log..", "io.pier.share..",
            "io.pier.group..", "io.pier.state..", "io.pier.txn..", "io.pier.service.."};

    static final ArchRule ENGINE_NEVER_REACHES_SERVER = noClasses().that().resideInAnyPackage(ENGINE)
            .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.service..",
                    "io.pier.runtime..", "io.pier.network..", "io.pier.protocol..", "io.pier.metrics..",
                    "io.pier.cli..", "io.netty..", "io.prometheus..");

    static final ArchRule PROTOCOL_IS_AN_ADAPTER = noClasses().that().resideInAPackage("io.pier.protocol..")
            .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.network..",
                    "io.pier.runtime..", "io.pier.cli..", "io.netty..")
            .because("the protocol layer turns Kafka messages into service commands and back, nothing more");

    static final ArchRule SERVICES_NEVER_REACH_ADAPTERS = noClasses().that().resideInAPackage("io.pier.service..")
            .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.network..",
                    "io.pier.protocol..", "io.pier.cli..", "io.netty..");

    static final ArchRule NETWORK_NEVER_REACHES_WIRING = noClasses().that().resideInAPackage("io.pier.network..")
            .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.cli..");

    static final ArchRule SHARD_OWNED_CODE_HAS_NO_LOCKS = noClasses().that().resideInAnyPackage(SHARD_OWNED)
            .should().dependOnClassesThat().resideInAPackage("java.util.concurrent.locks..")
            .because("threads meet only at queues (io.pier.runtime)");

    static final ArchRule SHARD_OWNED_CODE_HAS_NO_SYNCHRONIZED_METHODS = methods().that().areDeclaredInClassesThat()
            .resideInAnyPackage(SHARD_OWNED).should().notHaveModifier(JavaModifier.SYNCHRONIZED);

    static final ArchRule SHARD_OWNED_CODE_READS_TIME_FROM_CLOCK = noClasses().that().resideInAnyPackage(SHARD_OWNED)
            .and().doNotHaveFullyQualifiedName(Clock.class.getName())
            .and().doNotHaveFullyQualifiedName(Clock.class.getName() + "$1")
            .should().callMethod(System.class, "nanoTime")
            .orShould().callMethod(System.class, "currentTimeMillis")
            .because("time comes from the injected Clock, read once per duty cycle");

    static final ArchRule ENGINE_NEVER_SLEEPS = noClasses().that().resideInAnyPackage(SHARD_OWNED)
            .should().callMethod(Thread.class, "sleep", long.class);

    private static final List<ArchRule> RULES = List.of(ENGINE_NEVER_REACHES_SERVER, PROTOCOL_IS_AN_ADAPTER,
            SERVICES_NEVER_REACH_ADAPTERS, NETWORK_NEVER_REACHES_WIRING, SHARD_OWNED_CODE_HAS_NO_LOCKS,
            SHARD_OWNED_CODE_HAS_NO_SYNCHRONIZED_METHODS, SHARD_OWNED_CODE_READS_TIME_FROM_CLOCK, ENGINE_NEVER_SLEEPS);

    @Test
    void shouldKeepTheLayering() {
        RULES.forEach(rule -> rule.check(PIER));
    }

    @Test
    void shouldFailEachRuleOnADeliberateViolation() {
        for (ArchRule rule : RULES) {
            assertThatThrownBy(() -> rule.check(VIOLATIONS)).as(rule.getDescription()).isInstanceOf(AssertionError.class);
        }
    }

    @Test
    void shouldKeepLogIndependentOfShareAndGroup() {
        noClasses().that().resideInAPackage("io.pier.log..")
                .should().dependOnClassesThat().resideInAnyPackage("io.pier.share..", "io.pier.group..")
                .check(PIER);
    }

    @Test
    void shouldKeepShareAndGroupApart() {
        noClasses().that().resideInAPackage("io.pier.share..")
                .should().dependOnClassesThat().resideInAPackage("io.pier.group..")
                .check(PIER);
        noClasses().that().resideInAPackage("io.pier.group..")
                .should().dependOnClassesThat().resideInAPackage("io.pier.share..")
                .check(PIER);
    }

    @Test
    void shouldKeepTheRedriveOnThePublicKafkaClients() {
        // io.pier.dlq runs against any broker: only Kafka's public client API, no broker internals.
        noClasses().that().resideInAPackage("io.pier.dlq..")
                .should().dependOnClassesThat().resideOutsideOfPackages("io.pier.dlq..", "java..",
                        "org.apache.kafka.clients..", "org.apache.kafka.common..")
                .orShould().dependOnClassesThat().resideInAnyPackage("org.apache.kafka..internals..")
                .check(PIER);
    }

    @Test
    void shouldKeepMetricsIndependentOfServerWiring() {
        noClasses().that().resideInAPackage("io.pier.metrics..")
                .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.service..",
                        "io.pier.network..", "io.pier.protocol..", "io.pier.cli..")
                .check(PIER);
    }

    @Test
    void shouldKeepTheConsoleAReaderOfPublishedStateAndServices() {
        // The console renders snapshots and asks services; it never reaches the wiring, the network
        // or the protocol handlers, and nothing but the wiring reaches it.
        noClasses().that().resideInAPackage("io.pier.console..")
                .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.network..",
                        "io.pier.protocol..", "io.pier.cli..", "io.pier.runtime..", "io.netty..")
                .check(PIER);
        noClasses().that().resideOutsideOfPackages("io.pier.console..", "io.pier.server..")
                .should().dependOnClassesThat().resideInAPackage("io.pier.console..")
                .check(PIER);
    }

    @Test
    void shouldKeepTheShareStateDutyCycleFreeOfClocksThreadsAndLocks() {
        // The persister is an agent: time comes in as doWork's nowMs, its runner owns the thread.
        noClasses().that().haveNameMatching("io\\.pier\\.state\\."
                        + "(DurableSharePersister|DurableStoreAgent|ShareStateChanges|SnapshotPolicy|ShareStateReplay)"
                        + "(\\$.*)?")
                .should().callMethod(Clock.class, "monoMs")
                .orShould().callMethod(Clock.class, "wallMs")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().dependOnClassesThat().areAssignableTo(Thread.class)
                .orShould().dependOnClassesThat().resideInAPackage("java.util.concurrent.locks..")
                .check(PIER);
    }

    /** {@code synchronized} blocks leave no trace ArchUnit can see, so the sources are read. */
    private static final Pattern SYNCHRONIZED_BLOCK = Pattern.compile("(?m)^[^*/]*\\bsynchronized\\s*\\(");

    @Test
    void shouldHaveNoSynchronizedBlocksInShardOwnedSources() throws IOException {
        List<String> offenders = new ArrayList<>();
        for (Path root : List.of(Path.of("../pier-engine/src/main/java"), Path.of("src/main/java/io/pier/service"))) {
            assertThat(root).isDirectory();
            try (Stream<Path> files = Files.walk(root)) {
                for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                    if (SYNCHRONIZED_BLOCK.matcher(Files.readString(f, StandardCharsets.UTF_8)).find()) {
                        offenders.add(f.toString());
                    }
                }
            }
        }
        assertThat(offenders).isEmpty();
        assertThat(SYNCHRONIZED_BLOCK.matcher("        synchronized (this) {").find())
                .as("the pattern finds a block").isTrue();
    }
}
