package io.pier.protocol;

import io.pier.security.ScramCredentialStore;
import io.pier.service.MetadataWriter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData.UserName;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * DescribeUserScramCredentials and AlterUserScramCredentials (kafka-configs {@code --entity-type
 * users}), with Kafka's per-user errors: an unknown mechanism, an iteration count outside the
 * mechanism's range or an empty name is refused, a user named twice in one request is
 * DUPLICATE_RESOURCE, deleting a credential that does not exist is RESOURCE_NOT_FOUND. The client
 * sends a salt and a salted password, never the password.
 */
public final class ScramCredentialHandlers {
    private final ScramCredentialStore store;
    /** Credential changes are written off the event loops, one request at a time. */
    private final MetadataWriter writer;

    public ScramCredentialHandlers(ScramCredentialStore store, MetadataWriter writer) {
        this.store = store;
        this.writer = writer;
    }

    public CompletableFuture<AbstractResponse> describe(ApiRequest request) {
        List<UserName> asked = request.bodyAs(DescribeUserScramCredentialsRequest.class).data().users();
        DescribeUserScramCredentialsResponseData data = new DescribeUserScramCredentialsResponseData();
        boolean all = asked == null || asked.isEmpty();
        List<String> names = new ArrayList<>();
        if (all) {
            names.addAll(store.userNames());
        } else {
            asked.forEach(u -> names.add(u.name()));
        }
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (String n : names) {
            if (!seen.add(n)) {
                duplicates.add(n);
            }
        }
        Set<String> answered = new HashSet<>();
        for (String name : names) {
            if (!answered.add(name)) {
                continue;
            }
            DescribeUserScramCredentialsResult result = new DescribeUserScramCredentialsResult().setUser(name);
            if (duplicates.contains(name)) {
                result.setErrorCode(Errors.DUPLICATE_RESOURCE.code())
                        .setErrorMessage("Cannot describe SCRAM credentials for the same user twice in a single request: " + name);
            } else {
                var infos = store.describe(name);
                if (infos.isEmpty()) {
                    if (all) {
                        continue;
                    }
                    result.setErrorCode(Errors.RESOURCE_NOT_FOUND.code())
                            .setErrorMessage("Attempt to describe a user credential that does not exist: " + name);
                } else {
                    infos.forEach((m, iterations) -> result.credentialInfos().add(
                            new CredentialInfo().setMechanism(m.type()).setIterations(iterations)));
                }
            }
            data.results().add(result);
        }
        return CompletableFuture.completedFuture(new DescribeUserScramCredentialsResponse(data));
    }

    public CompletableFuture<AbstractResponse> alter(ApiRequest request) {
        var body = request.bodyAs(AlterUserScramCredentialsRequest.class).data();
        // One result per user; a user's changes (one per mechanism, as kafka-configs sends them)
        // apply in order until one fails. The same user and mechanism twice is refused whole.
        Map<String, Set<Byte>> mechanisms = new LinkedHashMap<>();
        Set<String> duplicates = new HashSet<>();
        for (ScramCredentialDeletion d : body.deletions()) {
            if (!mechanisms.computeIfAbsent(d.name(), n -> new HashSet<>()).add(d.mechanism())) {
                duplicates.add(d.name());
            }
        }
        for (ScramCredentialUpsertion u : body.upsertions()) {
            if (!mechanisms.computeIfAbsent(u.name(), n -> new HashSet<>()).add(u.mechanism())) {
                duplicates.add(u.name());
            }
        }
        Map<String, Outcome> outcomes = new LinkedHashMap<>();
        for (String name : mechanisms.keySet()) {
            outcomes.put(name, duplicates.contains(name) ? duplicate(name) : Outcome.OK);
        }
        return writer.<AbstractResponse>write(() -> {
            for (ScramCredentialDeletion d : body.deletions()) {
                if (outcomes.get(d.name()).error() == Errors.NONE) {
                    outcomes.put(d.name(), delete(d));
                }
            }
            for (ScramCredentialUpsertion u : body.upsertions()) {
                if (outcomes.get(u.name()).error() == Errors.NONE) {
                    outcomes.put(u.name(), upsert(u));
                }
            }
            AlterUserScramCredentialsResponseData data = new AlterUserScramCredentialsResponseData();
            outcomes.forEach((name, outcome) -> data.results().add(result(name, outcome)));
            return new AlterUserScramCredentialsResponse(data);
        });
    }

    private record Outcome(Errors error, String message) {
        static final Outcome OK = new Outcome(Errors.NONE, null);
    }

    private static Outcome duplicate(String name) {
        return new Outcome(Errors.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request: " + name);
    }

    private static AlterUserScramCredentialsResult result(String name, Outcome o) {
        return new AlterUserScramCredentialsResult().setUser(name).setErrorCode(o.error().code())
                .setErrorMessage(o.message());
    }

    private Outcome delete(ScramCredentialDeletion d) {
        ScramMechanism m = mechanism(d.mechanism());
        if (d.name().isEmpty()) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (m == null) {
            return new Outcome(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        }
        try {
            return store.remove(d.name(), m) ? Outcome.OK : new Outcome(Errors.RESOURCE_NOT_FOUND,
                    "Attempt to delete a user credential that does not exist");
        } catch (IOException e) {
            return new Outcome(Errors.KAFKA_STORAGE_ERROR, "The credential could not be written: " + e.getMessage());
        }
    }

    private Outcome upsert(ScramCredentialUpsertion u) {
        ScramMechanism m = mechanism(u.mechanism());
        if (u.name().isEmpty()) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (m == null) {
            return new Outcome(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        }
        if (u.iterations() < m.minIterations()) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        }
        if (u.iterations() > m.maxIterations()) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        }
        if (u.salt().length == 0 || u.saltedPassword().length == 0) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "Salt and salted password must not be empty");
        }
        try {
            store.put(u.name(), m, new ScramFormatter(m).generateCredential(u.salt(), u.saltedPassword(),
                    u.iterations()));
            return Outcome.OK;
        } catch (IOException e) {
            return new Outcome(Errors.KAFKA_STORAGE_ERROR, "The credential could not be written: " + e.getMessage());
        } catch (java.security.NoSuchAlgorithmException | RuntimeException e) {
            return new Outcome(Errors.UNACCEPTABLE_CREDENTIAL, "The credential could not be made: " + e.getMessage());
        }
    }

    private static ScramMechanism mechanism(byte type) {
        for (ScramMechanism m : ScramMechanism.values()) {
            if (m.type() == type) {
                return m;
            }
        }
        return null;
    }
}
