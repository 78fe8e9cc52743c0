package io.pier.security.acl;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Kafka's authorizer settings. {@code authorizer.class.name} names Kafka's StandardAuthorizer (or
 * {@code pier}) to turn ACLs on; unset leaves every request allowed.
 */
public record AuthorizerConfig(boolean enabled, Set<String> superUsers, boolean allowEveryoneIfNoAclFound) {
    public static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";
    public static final String KAFKA_STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    public static final String PIER_AUTHORIZER = "pier";

    public static AuthorizerConfig fromProperties(Map<String, String> raw) {
        String name = raw.getOrDefault(AUTHORIZER_CLASS_NAME, "").trim();
        boolean enabled = switch (name) {
            case "" -> false;
            case KAFKA_STANDARD_AUTHORIZER, PIER_AUTHORIZER -> true;
            default -> throw new IllegalArgumentException(AUTHORIZER_CLASS_NAME + "=" + name
                    + ": Pier has one authorizer; use " + KAFKA_STANDARD_AUTHORIZER + " or " + PIER_AUTHORIZER);
        };
        Set<String> supers = new HashSet<>();
        for (String s : raw.getOrDefault(SUPER_USERS, "").split(";")) {
            if (!s.isBlank()) {
                try {
                    // Normalised through KafkaPrincipal so "User:alice" compares like the request's principal.
                    supers.add(Principals.parse(s.trim()).toString());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(SUPER_USERS + ": " + e.getMessage(), e);
                }
            }
        }
        String allow = raw.getOrDefault(ALLOW_EVERYONE_IF_NO_ACL_FOUND, "false").trim();
        if (!allow.equalsIgnoreCase("true") && !allow.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(ALLOW_EVERYONE_IF_NO_ACL_FOUND + "=" + allow + ": true or false");
        }
        return new AuthorizerConfig(enabled, Set.copyOf(supers), Boolean.parseBoolean(allow));
    }
}
