package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.junit.jupiter.api.Test;

class ClientQuotaRulesTest {
    private static final ClientQuotaEntity ALICE = entity(ClientQuotaEntity.USER, "alice");
    private static final ClientQuotaEntity DEFAULT_CLIENT = entity(ClientQuotaEntity.CLIENT_ID, null);

    @Test
    void shouldSetChangeAndRemoveValuesAndDropAnEntityWithNoneLeft() {
        Map<ClientQuotaEntity, Map<String, Double>> q = ClientQuotaRules.alter(Map.of(), ALICE,
                Map.of("producer_byte_rate", 100.0, "request_percentage", 0.5));
        assertThat(q).containsExactly(Map.entry(ALICE, Map.of("producer_byte_rate", 100.0, "request_percentage", 0.5)));
        Map<String, Double> removeOne = new HashMap<>();
        removeOne.put("request_percentage", null);
        q = ClientQuotaRules.alter(q, ALICE, removeOne);
        assertThat(q.get(ALICE)).containsExactly(Map.entry("producer_byte_rate", 100.0));
        Map<String, Double> removeLast = new HashMap<>();
        removeLast.put("producer_byte_rate", null);
        assertThat(ClientQuotaRules.alter(q, ALICE, removeLast)).isEmpty();
    }

    @Test
    void shouldRefuseKeysValuesAndEntitiesKafkaRefuses() {
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), ALICE, Map.of("connection_creation_rate", 1.0)))
                .isInstanceOf(InvalidRequestException.class).hasMessage("Invalid configuration key connection_creation_rate");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), ALICE, Map.of("consumer_byte_rate", 1.5)))
                .hasMessage("consumer_byte_rate cannot be a fractional value.");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), ALICE, Map.of("request_percentage", 0.0)))
                .hasMessage("Quota request_percentage must be greater than 0");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), new ClientQuotaEntity(Map.of()),
                Map.of("request_percentage", 1.0))).hasMessage("Invalid empty client quota entity");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), entity("group", "g"), Map.of("request_percentage", 1.0)))
                .hasMessage("Unhandled client quota entity type: group");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), entity(ClientQuotaEntity.USER, ""),
                Map.of("request_percentage", 1.0))).hasMessage("Empty user not supported");
        assertThatThrownBy(() -> ClientQuotaRules.alter(Map.of(), new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP,
                "10.0.0.1", ClientQuotaEntity.USER, "a")), Map.of("connection_creation_rate", 1.0)))
                .hasMessageContaining("IP entity should not be combined");
        assertThat(ClientQuotaRules.alter(Map.of(), entity(ClientQuotaEntity.IP, "10.0.0.1"),
                Map.of("connection_creation_rate", 3.0))).hasSize(1);
    }

    @Test
    void shouldMatchNamesDefaultsAndTypesStrictlyOrNot() {
        Map<String, String> entries = new HashMap<>(Map.of(ClientQuotaEntity.USER, "alice"));
        entries.put(ClientQuotaEntity.CLIENT_ID, null);
        ClientQuotaEntity aliceDefaultClient = new ClientQuotaEntity(entries);
        Map<ClientQuotaEntity, Map<String, Double>> q = Map.of(ALICE, Map.of("producer_byte_rate", 1.0),
                DEFAULT_CLIENT, Map.of("producer_byte_rate", 2.0), aliceDefaultClient, Map.of("producer_byte_rate", 3.0));
        var alice = List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice"));
        assertThat(ClientQuotaRules.describe(q, ClientQuotaFilter.contains(alice))).containsOnlyKeys(ALICE, aliceDefaultClient);
        assertThat(ClientQuotaRules.describe(q, ClientQuotaFilter.containsOnly(alice))).containsOnlyKeys(ALICE);
        var defaultClient = List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.CLIENT_ID));
        assertThat(ClientQuotaRules.describe(q, ClientQuotaFilter.contains(defaultClient)))
                .containsOnlyKeys(DEFAULT_CLIENT, aliceDefaultClient);
        var anyUser = List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.USER));
        assertThat(ClientQuotaRules.describe(q, ClientQuotaFilter.contains(anyUser))).containsOnlyKeys(ALICE, aliceDefaultClient);
        assertThat(ClientQuotaRules.describe(q, ClientQuotaFilter.all())).hasSize(3);
    }

    @Test
    void shouldRefuseBadFilters() {
        assertThatThrownBy(() -> ClientQuotaRules.describe(Map.of(), ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntityType("user"), ClientQuotaFilterComponent.ofEntity("user", "x")))))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("cannot appear more than once");
        assertThatThrownBy(() -> ClientQuotaRules.describe(Map.of(), ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntityType("group"))))).isInstanceOf(UnsupportedVersionException.class);
        assertThatThrownBy(() -> ClientQuotaRules.describe(Map.of(), ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntityType("ip"), ClientQuotaFilterComponent.ofDefaultEntity("client-id")))))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("IP filter component");
    }

    private static ClientQuotaEntity entity(String type, String name) {
        Map<String, String> entries = new HashMap<>();
        entries.put(type, name);
        return new ClientQuotaEntity(entries);
    }
}
