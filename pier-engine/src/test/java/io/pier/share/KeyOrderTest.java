package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The per-key order's own bookkeeping: first of key, and the ready offsets across a move of its bits. */
class KeyOrderTest {
    @Test
    void shouldKeepOnlyTheFirstUnsettledRecordOfAKeyFirst() {
        KeyOrder order = new KeyOrder(10);
        order.open(10, 7);
        order.open(12, 7);
        order.open(11, KeyOrder.NO_KEY);

        assertThat(order.isFirstOfKey(10, 7)).isTrue();
        assertThat(order.isFirstOfKey(12, 7)).isFalse();
        assertThat(order.isFirstOfKey(11, KeyOrder.NO_KEY)).isTrue();
        assertThat(order.blockedKeys()).isEqualTo(1);
        assertThat(order.oldestBlockedOffset()).isEqualTo(12);
        assertThat(order.close(10, 7)).as("the next of key 7").isEqualTo(12);
        assertThat(order.close(12, 7)).isEqualTo(-1);
        assertThat(order.isOpen(7)).isFalse();
    }

    @Test
    void shouldFindReadyOffsetsAcrossAMoveOfItsBits() {
        KeyOrder order = new KeyOrder(0);
        order.ready(5, true);
        order.ready(200_000, true);
        order.ready(5, false);
        assertThat(order.nextReady(0)).isEqualTo(200_000);

        order.forgetBelow(150_000);
        assertThat(order.nextReady(0)).isEqualTo(200_000);
        assertThat(order.readyCount()).isEqualTo(1);
        order.ready(150_001, true);
        assertThat(order.nextReady(150_000)).isEqualTo(150_001);
        order.ready(150_001, false);
        order.ready(200_000, false);
        assertThat(order.nextReady(0)).isEqualTo(-1);
        assertThat(order.readyCount()).isZero();
    }
}
