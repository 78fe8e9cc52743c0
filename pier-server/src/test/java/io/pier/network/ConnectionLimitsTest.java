package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.network.ConnectionLimits.Admission;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {
    private static final int UNLIMITED = Integer.MAX_VALUE;
    private static final InetAddress A = address("10.0.0.1");
    private static final InetAddress B = address("10.0.0.2");

    @Test
    void shouldRefuseAnAddressPastItsLimitAndAdmitItAgainAfterARelease() {
        ConnectionLimits limits = new ConnectionLimits(UNLIMITED, 2, Map.of(), Map.of(), null);

        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.OVER_PER_IP);
        assertThat(limits.tryAcquire("PLAINTEXT", B)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.connections(A)).isEqualTo(2);
        assertThat(limits.connections()).isEqualTo(3);
        assertThat(limits.connections("PLAINTEXT")).isEqualTo(3);

        limits.release("PLAINTEXT", A);

        assertThat(limits.connections(A)).isEqualTo(1);
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
    }

    @Test
    void shouldLetAnOverrideRaiseOrLowerTheLimitOfOneAddress() {
        ConnectionLimits limits = new ConnectionLimits(UNLIMITED, 1, Map.of(A, 3, B, 0), Map.of(), null);

        for (int i = 0; i < 3; i++) {
            assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
        }
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.OVER_PER_IP);
        assertThat(limits.tryAcquire("PLAINTEXT", B)).isEqualTo(Admission.OVER_PER_IP);
        assertThat(limits.tryAcquire("PLAINTEXT", address("10.0.0.3"))).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", address("10.0.0.3"))).isEqualTo(Admission.OVER_PER_IP);
    }

    @Test
    void shouldRefuseAnyConnectionPastTheBrokerWideLimit() {
        ConnectionLimits limits = new ConnectionLimits(2, UNLIMITED, Map.of(), Map.of(), null);

        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("SSL", B)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("SSL", address("10.0.0.3"))).isEqualTo(Admission.OVER_BROKER);

        limits.release("SSL", B);

        assertThat(limits.tryAcquire("PLAINTEXT", address("10.0.0.3"))).isEqualTo(Admission.ADMITTED);
    }

    @Test
    void shouldLimitEachListenerOnItsOwn() {
        ConnectionLimits limits = new ConnectionLimits(UNLIMITED, UNLIMITED, Map.of(), Map.of("SSL", 1), null);

        assertThat(limits.tryAcquire("SSL", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("SSL", B)).isEqualTo(Admission.OVER_LISTENER);
        assertThat(limits.tryAcquire("PLAINTEXT", B)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", B)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.connections("SSL")).isEqualTo(1);
    }

    @Test
    void shouldCountTheExemptListenerWithoutRefusingIt() {
        ConnectionLimits limits = new ConnectionLimits(1, UNLIMITED, Map.of(), Map.of(), "INTERNAL");

        assertThat(limits.tryAcquire("INTERNAL", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("INTERNAL", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("CLIENTS", B)).isEqualTo(Admission.OVER_BROKER);
        assertThat(limits.connections()).isEqualTo(2);
    }

    @Test
    void shouldRefuseEveryConnectionAtALimitOfZero() {
        assertThat(new ConnectionLimits(0, UNLIMITED, Map.of(), Map.of(), null).tryAcquire("PLAINTEXT", A))
                .isEqualTo(Admission.OVER_BROKER);
        assertThat(new ConnectionLimits(UNLIMITED, UNLIMITED, Map.of(), Map.of("PLAINTEXT", 0), null)
                .tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.OVER_LISTENER);
    }

    @Test
    void shouldHoldNoSlotForARefusedConnection() {
        ConnectionLimits limits = new ConnectionLimits(3, 1, Map.of(), Map.of("PLAINTEXT", 2), null);
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);

        // Refused by each limit in turn: none of them may keep a count for it.
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.OVER_PER_IP);
        assertThat(limits.tryAcquire("PLAINTEXT", B)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", address("10.0.0.3"))).isEqualTo(Admission.OVER_LISTENER);
        assertThat(limits.tryAcquire("SSL", address("10.0.0.4"))).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("SSL", address("10.0.0.5"))).isEqualTo(Admission.OVER_BROKER);

        assertThat(limits.connections()).isEqualTo(3);
        assertThat(limits.connections("PLAINTEXT")).isEqualTo(2);
        assertThat(limits.connections("SSL")).isEqualTo(1);
        assertThat(limits.connections(A)).isEqualTo(1);
        assertThat(limits.connections(address("10.0.0.3"))).isZero();
        assertThat(limits.connections(address("10.0.0.5"))).isZero();
    }

    @Test
    void shouldForgetAnAddressOnceItsLastConnectionIsReleased() {
        ConnectionLimits limits = ConnectionLimits.unlimited();
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);
        assertThat(limits.tryAcquire("PLAINTEXT", A)).isEqualTo(Admission.ADMITTED);

        limits.release("PLAINTEXT", A);
        limits.release("PLAINTEXT", A);

        assertThat(limits.connections(A)).isZero();
        assertThat(limits.trackedAddresses()).isZero();
        assertThat(limits.connections()).isZero();
        assertThat(limits.connections("PLAINTEXT")).isZero();
    }

    @Test
    void shouldNameTheSettingThatRefused() {
        assertThat(Admission.OVER_LISTENER.setting("INTERNAL")).isEqualTo("listener.name.internal.max.connections");
        assertThat(Admission.OVER_BROKER.setting("INTERNAL")).isEqualTo("max.connections");
        assertThat(Admission.OVER_PER_IP.setting("INTERNAL")).isEqualTo("max.connections.per.ip");
    }

    private static InetAddress address(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
