package io.pier.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The lease driven by numbers: times in ms, turned into the nanoseconds it takes. */
class ServingLeaseTest {
    private static final long MS = 1_000_000L;
    private static final long START = 5_000 * MS;

    @Test
    void shouldExpireOnceNeitherTheGroupNorTheUpstreamAnsweredWithinTheLease() {
        ServingLease lease = new ServingLease(8_000, START);
        lease.groupAnswers(3, START);

        assertThat(lease.expired(START, START + 8_000 * MS)).isFalse();
        assertThat(lease.expired(START, START + 8_001 * MS)).isTrue();
    }

    @Test
    void shouldBeRenewedByANewGroupAnswerOnly() {
        ServingLease lease = new ServingLease(8_000, START);
        lease.groupAnswers(3, START);
        lease.groupAnswers(3, START + 5_000 * MS); // the same count: no answer came meanwhile
        assertThat(lease.expired(START, START + 9_000 * MS)).isTrue();

        lease.groupAnswers(4, START + 6_000 * MS);
        assertThat(lease.expired(START, START + 9_000 * MS)).isFalse();
        assertThat(lease.expired(START, START + 14_001 * MS)).isTrue();
    }

    @Test
    void shouldBeKeptByUpstreamAnswersWhileTheGroupIsQuiet() {
        // a JoinGroup waiting for a member that is gone: no heartbeat, but the mirrors are answered
        ServingLease lease = new ServingLease(8_000, START);
        lease.groupAnswers(10, START);

        assertThat(lease.expired(START + 7_000 * MS, START + 12_000 * MS)).isFalse();
        assertThat(lease.expired(START + 7_000 * MS, START + 15_001 * MS)).isTrue();
    }

    @Test
    void shouldStartAfreshAfterARestart() {
        ServingLease lease = new ServingLease(8_000, START);
        assertThat(lease.expired(START, START + 9_000 * MS)).isTrue();

        lease.restart(START + 9_000 * MS);

        assertThat(lease.expired(START, START + 16_000 * MS)).isFalse();
        assertThat(lease.expired(START, START + 17_001 * MS)).isTrue();
    }

    @Test
    void shouldRefuseALeaseOfNothing() {
        assertThatThrownBy(() -> new ServingLease(0, START)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1 ms");
    }
}
