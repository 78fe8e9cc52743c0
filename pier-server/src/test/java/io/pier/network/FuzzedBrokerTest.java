package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.group.ClassicGroupDescription;
import io.pier.group.ClassicGroupListing;
import io.pier.runtime.ManualAgents;
import io.pier.service.ConsumerGroups;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The fuzz targets' broker stays comparable from one input to the next. */
class FuzzedBrokerTest {
    /** Finding 7 of docs/reliability.md: three JoinGroup v0 frames with no member id. */
    private static final Path JOIN_GROUP_V0 = Path.of("src/test/resources/io/pier/network/FrameFuzzTestInputs/frames/"
            + "joingroup-v0-new-members-over-allocation-bound-after-3.7M-inputs");

    /**
     * The same JoinGroup input replayed on one broker stops adding members at the cap, so a late
     * input costs what an early one did; without the cap every replay added three members that
     * never leave (the clock stands still), and each later JoinGroup walked them all.
     */
    @Test
    void repeatedJoinGroupInputsStopAddingMembersAtTheCap() throws Exception {
        byte[] input = Files.readAllBytes(JOIN_GROUP_V0);
        try (FuzzedBroker broker = new FuzzedBroker()) {
            for (int i = 0; i < 60; i++) {
                broker.feed(input);
            }
            assertThat(largestClassicGroup(broker)).isEqualTo(FuzzedBroker.GROUP_MAX_SIZE);
            broker.assertNoHandlerFailed("60 replays");

            for (int i = 0; i < 200; i++) {
                broker.feed(input);
            }
            assertThat(largestClassicGroup(broker)).isEqualTo(FuzzedBroker.GROUP_MAX_SIZE);
            broker.assertAllocationBounded("a replay past the cap", () -> {
                broker.feed(input);
                return input.length;
            });
        }
    }

    private static int largestClassicGroup(FuzzedBroker broker) throws Exception {
        ConsumerGroups groups = broker.broker.services.consumerGroups();
        ManualAgents agents = broker.broker.agents;
        int largest = 0;
        for (ClassicGroupListing listing : agents.await(groups.list()).classic()) {
            ClassicGroupDescription group = agents.await(groups.describe(listing.groupId())).group().orElseThrow();
            largest = Math.max(largest, group.members().size());
        }
        return largest;
    }
}
