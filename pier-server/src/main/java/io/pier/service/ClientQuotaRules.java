package io.pier.service;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

/**
 * What Kafka accepts as a client quota (KIP-546), and how a describe filter matches: pure
 * functions over an image of quotas, with Kafka's error messages. Entities are user, client-id,
 * the pair of both, or ip alone; a null name is the type's default entity. User and client-id
 * entities take the byte rates (whole numbers), {@code request_percentage} and
 * {@code controller_mutation_rate}; an ip entity takes {@code connection_creation_rate} (a whole
 * number). Every value must be above 0.
 */
final class ClientQuotaRules {
    /** Whether a key's value must be a whole number (Kafka's LONG and INT quota types). */
    private static final Map<String, Boolean> USER_AND_CLIENT_KEYS = Map.of(
            "producer_byte_rate", true,
            "consumer_byte_rate", true,
            "request_percentage", false,
            "controller_mutation_rate", false);
    private static final Map<String, Boolean> IP_KEYS = Map.of("connection_creation_rate", true);

    private ClientQuotaRules() {}

    /**
     * {@code quotas} after one entity's changes ({@code changes}: key to new value, null removes),
     * or an {@link InvalidRequestException} naming what Kafka would refuse. Nothing is changed on
     * a refusal.
     */
    static Map<ClientQuotaEntity, Map<String, Double>> alter(Map<ClientQuotaEntity, Map<String, Double>> quotas,
            ClientQuotaEntity entity, Map<String, Double> changes) {
        Map<String, Boolean> keys = keysFor(entity);
        Map<String, Double> values = new HashMap<>(quotas.getOrDefault(entity, Map.of()));
        for (Map.Entry<String, Double> change : changes.entrySet()) {
            String key = change.getKey();
            Double value = change.getValue();
            if (value == null) {
                values.remove(key);
                continue;
            }
            Boolean whole = keys.get(key);
            if (whole == null) {
                throw new InvalidRequestException("Invalid configuration key " + key);
            }
            if (value <= 0.0) {
                throw new InvalidRequestException("Quota " + key + " must be greater than 0");
            }
            if (whole && Math.abs(value % 1.0) > 1e-6) {
                throw new InvalidRequestException(key + " cannot be a fractional value.");
            }
            values.put(key, value);
        }
        Map<ClientQuotaEntity, Map<String, Double>> next = new HashMap<>(quotas);
        if (values.isEmpty()) {
            next.remove(entity);
        } else {
            next.put(entity, Map.copyOf(values));
        }
        return next;
    }

    private static Map<String, Boolean> keysFor(ClientQuotaEntity entity) {
        Map<String, String> entries = entity.entries();
        if (entries.isEmpty()) {
            throw new InvalidRequestException("Invalid empty client quota entity");
        }
        for (Map.Entry<String, String> e : entries.entrySet()) {
            String type = e.getKey();
            if (!type.equals(ClientQuotaEntity.USER) && !type.equals(ClientQuotaEntity.CLIENT_ID)
                    && !type.equals(ClientQuotaEntity.IP)) {
                throw new InvalidRequestException("Unhandled client quota entity type: " + type);
            }
            if (e.getValue() != null && e.getValue().isEmpty()) {
                throw new InvalidRequestException("Empty " + type + " not supported");
            }
        }
        if (!entries.containsKey(ClientQuotaEntity.IP)) {
            return USER_AND_CLIENT_KEYS;
        }
        if (entries.size() > 1) {
            throw new InvalidRequestException(
                    "Invalid quota entity combination, IP entity should not be combined with User or ClientId");
        }
        String ip = entries.get(ClientQuotaEntity.IP);
        if (ip != null && !resolvable(ip)) {
            throw new InvalidRequestException(ip + " is not a valid IP or resolvable host.");
        }
        return IP_KEYS;
    }

    private static boolean resolvable(String host) {
        try {
            InetAddress.getByName(host);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The entities {@code filter} matches: per component, a name ({@code ofEntity}), the default
     * entity ({@code ofDefaultEntity}, an empty match) or any entity of the type
     * ({@code ofEntityType}, no match); strict also requires no other entity types.
     */
    static Map<ClientQuotaEntity, Map<String, Double>> describe(Map<ClientQuotaEntity, Map<String, Double>> quotas,
            ClientQuotaFilter filter) {
        Map<String, Optional<String>> exact = new HashMap<>();
        Set<String> anyOfType = new HashSet<>();
        for (ClientQuotaFilterComponent c : filter.components()) {
            String type = c.entityType();
            if (type.isEmpty()) {
                throw new InvalidRequestException("Invalid empty entity type.");
            }
            if (exact.containsKey(type) || anyOfType.contains(type)) {
                throw new InvalidRequestException("Entity type " + type + " cannot appear more than once in the filter.");
            }
            if (!type.equals(ClientQuotaEntity.USER) && !type.equals(ClientQuotaEntity.CLIENT_ID)
                    && !type.equals(ClientQuotaEntity.IP)) {
                throw new UnsupportedVersionException("Unsupported entity type " + type);
            }
            if (c.match() == null) {
                anyOfType.add(type);
            } else {
                exact.put(type, c.match());
            }
        }
        boolean ip = exact.containsKey(ClientQuotaEntity.IP) || anyOfType.contains(ClientQuotaEntity.IP);
        if (ip && exact.size() + anyOfType.size() > 1) {
            throw new InvalidRequestException("Invalid entity filter component combination. IP filter component"
                    + " should not be used with user or clientId filter component.");
        }
        Map<ClientQuotaEntity, Map<String, Double>> out = new HashMap<>();
        quotas.forEach((entity, values) -> {
            if (matches(entity.entries(), exact, anyOfType, filter.strict())) {
                out.put(entity, values);
            }
        });
        return out;
    }

    private static boolean matches(Map<String, String> entity, Map<String, Optional<String>> exact,
            Set<String> anyOfType, boolean strict) {
        if (strict && entity.size() != exact.size() + anyOfType.size()) {
            return false;
        }
        for (Map.Entry<String, Optional<String>> e : exact.entrySet()) {
            if (!entity.containsKey(e.getKey()) || !Objects.equals(entity.get(e.getKey()), e.getValue().orElse(null))) {
                return false;
            }
        }
        return entity.keySet().containsAll(anyOfType);
    }
}
