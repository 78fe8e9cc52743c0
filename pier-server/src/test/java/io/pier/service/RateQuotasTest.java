package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.common.ManualClock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.junit.jupiter.api.Test;

class RateQuotasTest {
    private static final KafkaPrincipal ALICE = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "alice");
    private static final KafkaPrincipal BOB = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "bob");

    private final ManualClock clock = new ManualClock(1_000_000);
    private final AtomicReference<Map<ClientQuotaEntity, Map<String, Double>>> image = new AtomicReference<>(Map.of());
    private final RateQuotas quotas = new RateQuotas("producer_byte_rate", image::get, clock, 1000, 11);

    @Test
    void shouldNotThrottleWithoutAQuota() {
        assertThat(quotas.record(ALICE, "app", 1L << 30)).isZero();
    }

    @Test
    void shouldSpreadAFirstBurstOverTenWindowsThenThrottleByTheExcess() {
        set(entity(ClientQuotaEntity.CLIENT_ID, "app"), 1000.0);
        // 5,000 bytes over the minimum span of 10 windows: 500 B/s, within 1,000 B/s.
        assertThat(quotas.record(ALICE, "app", 5000)).isZero();
        // 15,000 bytes: 1,500 B/s, half over the quota, so half the span: 5 s.
        assertThat(quotas.record(ALICE, "app", 10_000)).isBetween(4990, 5010);
        // Another client id has no quota.
        assertThat(quotas.record(ALICE, "other", 1_000_000)).isZero();
    }

    @Test
    void shouldLetTheRateFallAsWindowsExpire() {
        set(entity(ClientQuotaEntity.CLIENT_ID, "app"), 1000.0);
        assertThat(quotas.record(ALICE, "app", 20_000)).isPositive();
        clock.advance(11_000); // every window of the burst has expired
        assertThat(quotas.record(ALICE, "app", 100)).isZero();
    }

    @Test
    void shouldCapTheThrottleAtTheWholeSpan() {
        set(entity(ClientQuotaEntity.CLIENT_ID, "app"), 1.0);
        assertThat(quotas.record(ALICE, "app", 1_000_000)).isEqualTo(11_000);
    }

    @Test
    void shouldPickTheMostSpecificQuotaAndShareItsRateAcrossClients() {
        Map<String, String> userDefaultClient = new HashMap<>();
        userDefaultClient.put(ClientQuotaEntity.USER, "alice");
        userDefaultClient.put(ClientQuotaEntity.CLIENT_ID, null);
        Map<ClientQuotaEntity, Map<String, Double>> q = new HashMap<>();
        q.put(entity(ClientQuotaEntity.USER, "alice"), Map.of("producer_byte_rate", 1_000_000.0));
        q.put(new ClientQuotaEntity(userDefaultClient), Map.of("producer_byte_rate", 1000.0));
        q.put(entity(ClientQuotaEntity.USER, null), Map.of("producer_byte_rate", 100.0));
        q.put(entity(ClientQuotaEntity.CLIENT_ID, "app"), Map.of("consumer_byte_rate", 1.0)); // another key
        image.set(q);
        // alice resolves to (alice, default client) before (alice): every client id of hers shares 1,000 B/s.
        assertThat(quotas.record(ALICE, "a", 6000)).isZero();
        assertThat(quotas.record(ALICE, "b", 6000)).isPositive();
        // bob has only the default user's 100 B/s.
        assertThat(quotas.record(BOB, "a", 2000)).isPositive();
    }

    @Test
    void shouldFollowQuotaChanges() {
        set(entity(ClientQuotaEntity.CLIENT_ID, "app"), 1000.0);
        assertThat(quotas.record(ALICE, "app", 20_000)).isPositive();
        image.set(Map.of());
        assertThat(quotas.record(ALICE, "app", 20_000)).isZero();
    }

    @Test
    void shouldMeasureRequestPercentageAsThreadTime() {
        RateQuotas requests = RateQuotas.requestPercentage(image::get, clock, 1000, 11);
        image.set(Map.of(entity(ClientQuotaEntity.CLIENT_ID, "app"), Map.of("request_percentage", 10.0)));
        // 10% of a thread is 100 ms per second: 0.5 s of request time over the 10 s span is 5%.
        assertThat(requests.record(ALICE, "app", 500_000_000L)).isZero();
        // 1.5 s: 15%, half over the quota, so half the span.
        assertThat(requests.record(ALICE, "app", 1_000_000_000L)).isBetween(4990, 5010);
        // The byte quotas do not read it.
        assertThat(quotas.record(ALICE, "app", 1L << 30)).isZero();
    }

    private void set(ClientQuotaEntity entity, double bytesPerSecond) {
        image.set(Map.of(entity, Map.of("producer_byte_rate", bytesPerSecond)));
    }

    private static ClientQuotaEntity entity(String type, String name) {
        Map<String, String> m = new HashMap<>();
        m.put(type, name);
        return new ClientQuotaEntity(m);
    }
}
