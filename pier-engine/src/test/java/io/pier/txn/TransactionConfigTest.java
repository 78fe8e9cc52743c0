package io.pier.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TransactionConfigTest {
    @Test
    void shouldReadKafkasNamesAndDefaults() {
        assertThat(TransactionConfig.fromProperties(Map.of())).isEqualTo(TransactionConfig.DEFAULTS);
        TransactionConfig c = TransactionConfig.fromProperties(Map.of("transaction.max.timeout.ms", "60000",
                "transaction.version", " 1 "));
        assertThat(c.maxTimeoutMs()).isEqualTo(60_000);
        assertThat(c.transactionVersion()).isEqualTo((short) 1);
        assertThat(c.transactionV2()).isFalse();
        assertThat(TransactionConfig.DEFAULTS.transactionV2()).isTrue();
    }

    @Test
    void shouldNameTheSettingOfABadValue() {
        assertThatThrownBy(() -> TransactionConfig.fromProperties(Map.of("transaction.version", "two")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transaction.version")
                .hasMessageContaining("'two'");
        assertThatThrownBy(() -> TransactionConfig.fromProperties(Map.of("transaction.version", "3")))
                .hasMessageContaining("transaction.version must be 0, 1 or 2");
        assertThatThrownBy(() -> TransactionConfig.fromProperties(Map.of("transaction.max.timeout.ms",
                "99999999999"))).hasMessageContaining("transaction.max.timeout.ms");
        assertThatThrownBy(() -> TransactionConfig.fromProperties(Map.of("transactional.id.expiration.ms", "0")))
                .hasMessageContaining("transactional.id.expiration.ms must be at least 1");
    }
}
