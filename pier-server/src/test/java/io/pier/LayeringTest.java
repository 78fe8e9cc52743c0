package io.pier;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import io.pier.common.Clock;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The architecture's layering (docs: architecture.md), checked on the compiled classes. */
class LayeringTest {
    private static final JavaClasses PIER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.pier");

    @Test
    void shouldKeepEngineFreeOfServerAndNetty() {
        noClasses().that().resideInAnyPackage("io.pier.common..", "io.pier.log..", "io.pier.share..",
                        "io.pier.group..", "io.pier.state..")
                .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.network..",
                        "io.pier.protocol..", "io.pier.metrics..", "io.pier.cli..", "io.netty..",
                        "io.prometheus..")
                .check(PIER);
    }

    @Test
    void shouldKeepMetricsIndependentOfServerWiring() {
        noClasses().that().resideInAPackage("io.pier.metrics..")
                .should().dependOnClassesThat().resideInAnyPackage("io.pier.server..", "io.pier.network..",
                        "io.pier.protocol..", "io.pier.cli..")
                .check(PIER);
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
    void shouldKeepTheShareStateDutyCycleFreeOfClocksThreadsAndLocks() {
        // The persister is an agent: time comes in as doWork's nowMs, its runner owns the thread.
        noClasses().that().haveNameMatching("io\\.pier\\.state\\."
                        + "(DurableSharePersister|ShareStateChanges|SnapshotPolicy|ShareStateReplay)(\\$.*)?")
                .should().callMethod(Clock.class, "monoMs")
                .orShould().callMethod(Clock.class, "wallMs")
                .orShould().callMethod(System.class, "nanoTime")
                .orShould().callMethod(System.class, "currentTimeMillis")
                .orShould().dependOnClassesThat().areAssignableTo(Thread.class)
                .orShould().dependOnClassesThat().resideInAPackage("java.util.concurrent.locks..")
                .check(PIER);
    }

    @Test
    void shouldKeepEngineFreeOfLocksAndSleeps() {
        noClasses().that().resideInAnyPackage("io.pier.log..", "io.pier.share..", "io.pier.group..")
                .should().callMethod(Thread.class, "sleep", long.class)
                .check(PIER);
    }
}
