package io.pier.it.soak;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.it.soak.Redeliveries.Outcome;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The I11 ledger finds the redeliveries nothing explains, and the I5 case it sees first. */
class RedeliveriesTest {
    private static final TopicPartition TP = new TopicPartition("soak", 0);

    private final Redeliveries ledger = new Redeliveries();
    private final Violations violations = new Violations();

    @Test
    void shouldExplainRedeliveriesByReleaseUnconfirmedAckLockOrCrash() {
        deliverThen(1, 1, Outcome.RELEASED);
        deliverThen(2, 1, Outcome.NOT_CONFIRMED);
        deliverThen(3, 1, Outcome.HELD_PAST_LOCK);
        ledger.delivered(TP, 4, (short) 1); // its holder still had it when the broker crashed
        ledger.crashed();
        for (long offset = 1; offset <= 4; offset++) {
            ledger.delivered(TP, offset, (short) 2);
        }

        ledger.check(violations);

        assertThat(violations.list()).isEmpty();
        assertThat(ledger.summary()).contains("4 redeliveries in 8 deliveries")
                .contains("RELEASED=1").contains("NOT_CONFIRMED=1").contains("HELD_PAST_LOCK=1").contains("CRASH=1");
    }

    @Test
    void shouldFlagARedeliveryWhileItsHolderStillHadItAndNoCrash() {
        ledger.delivered(TP, 7, (short) 1);
        ledger.delivered(TP, 7, (short) 2);

        ledger.check(violations);

        assertThat(violations.list()).singleElement().asString().startsWith("I11: soak-0@7");
    }

    @Test
    void shouldFlagAConfirmedAcceptOfADeliveryTheRecordHadAlreadyOutlived() {
        ledger.delivered(TP, 9, (short) 1);
        ledger.delivered(TP, 9, (short) 2);

        ledger.outcome(TP, 9, (short) 1, Outcome.FINAL_CONFIRMED, violations);

        assertThat(violations.list()).singleElement().asString()
                .isEqualTo("I5: soak-0@9: ACCEPT/REJECT of delivery 1 confirmed although the record was delivered"
                        + " again with count 2");
    }

    private void deliverThen(long offset, int count, Outcome outcome) {
        ledger.delivered(TP, offset, (short) count);
        ledger.outcome(TP, offset, (short) count, outcome, violations);
    }
}
