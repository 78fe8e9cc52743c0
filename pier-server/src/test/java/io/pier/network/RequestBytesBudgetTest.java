package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.common.ManualClock;
import io.pier.protocol.ApiRouter;
import io.pier.runtime.ManualAgents;
import io.pier.service.HandDrivenServices;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code queued.max.request.bytes}: the budget alone, then two connections sharing one through the
 * real decoder and request handler on a hand-driven broker. A fetch parked for its MaxWaitMs holds
 * its request's bytes, so it is the way to keep a budget full for as long as a test needs.
 */
class RequestBytesBudgetTest {
    @TempDir
    Path dir;
    private HandDrivenServices broker;
    private ManualAgents agents;
    private ManualClock clock;
    private ApiRouter router;
    private EmbeddedChannel first;
    private EmbeddedChannel second;
    private int correlationId;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, 2);
        agents = broker.agents;
        clock = broker.clock;
        router = HandDrivenPipeline.router(broker);
    }

    @AfterEach
    void stop() {
        for (EmbeddedChannel c : new EmbeddedChannel[] {first, second}) {
            if (c != null) {
                c.finishAndReleaseAll();
            }
        }
        broker.close();
    }

    @Test
    void shouldLetAFrameTakeTheLastRoomAndThenRefuseUntilBytesComeBack() {
        RequestBytesBudget budget = new RequestBytesBudget(100);
        assertThat(budget.tryTake(60)).isTrue();
        assertThat(budget.tryTake(60)).as("some room was left: not strict, as Kafka's pool").isTrue();
        assertThat(budget.availableBytes()).isEqualTo(-20);
        assertThat(budget.tryTake(1)).isFalse();

        AtomicInteger woken = new AtomicInteger();
        budget.whenRoom(woken::incrementAndGet);
        budget.giveBack(20);
        assertThat(woken).as("back to 0: still no room").hasValue(0);
        budget.giveBack(1);
        assertThat(woken).hasValue(1);
        budget.giveBack(99);
        assertThat(woken).as("each waiter is woken once").hasValue(1);
        assertThat(budget.availableBytes()).isEqualTo(100);

        budget.whenRoom(woken::incrementAndGet);
        assertThat(woken).as("room already there: woken at once").hasValue(2);
    }

    @Test
    void shouldTakeAnythingWithoutABudget() {
        RequestBytesBudget none = new RequestBytesBudget(0);
        assertThat(none.limited()).isFalse();
        assertThat(none.tryTake(Integer.MAX_VALUE)).isTrue();
        assertThat(RequestBytesBudget.unlimited().tryTake(Integer.MAX_VALUE)).isTrue();
    }

    @Test
    void shouldStopReadingEveryConnectionWhileTheBudgetIsSpentAndResumeWhenAnAnswerGivesItBack() {
        RequestBytesBudget budget = new RequestBytesBudget(1);
        Blocked blocked = spendWithAParkedFetchAndBlockASecondConnection(budget);
        assertThat(second.config().isAutoRead()).isFalse();

        // The fetch is answered at its MaxWaitMs; its bytes come back and the waiting request is read.
        clock.advance(60_000);
        FetchResponse fetched = (FetchResponse) next(first, blocked.parkedFetch());
        assertThat(fetched.data().responses().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        ApiVersionsResponse answered = (ApiVersionsResponse) next(second, blocked.waiting());
        assertThat(answered.data().errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(second.config().isAutoRead()).as("reading again").isTrue();
        assertThat(budget.availableBytes()).as("every byte given back").isEqualTo(1);
    }

    @Test
    void shouldGiveBackTheBytesOfUnansweredRequestsWhenTheirConnectionCloses() {
        RequestBytesBudget budget = new RequestBytesBudget(1);
        RequestHeader versions = spendWithAParkedFetchAndBlockASecondConnection(budget).waiting();

        var unused = first.close();
        first.runPendingTasks();
        assertThat(next(second, versions)).as("read once the closed connection gave its bytes back")
                .isInstanceOf(ApiVersionsResponse.class);

        // The parked fetch ends later; its bytes are not given back a second time.
        clock.advance(60_000);
        agents.runUntilIdle();
        first.runPendingTasks();
        assertThat(budget.availableBytes()).isEqualTo(1);
    }

    /** The fetch parked on the first connection and the request the second could not have read. */
    private record Blocked(RequestHeader parkedFetch, RequestHeader waiting) {}

    /**
     * Opens both connections on {@code budget} (of 1 byte): a fetch parked on the first takes the
     * byte and more, so the second's ApiVersions stays in its buffer, not read, not answered.
     */
    private Blocked spendWithAParkedFetchAndBlockASecondConnection(RequestBytesBudget budget) {
        first = HandDrivenPipeline.connection(router, 40_001, budget);
        second = HandDrivenPipeline.connection(router, 40_002, budget);
        createTopic(first, "held");
        RequestHeader parked = send(first, fetch("held", 60_000));
        assertThat(next(first, parked)).isNull();
        assertThat(budget.availableBytes()).as("spent while the fetch waits").isNegative();
        RequestHeader versions = send(second, apiVersions());
        assertThat(next(second, versions)).as("not read while the budget is spent").isNull();
        return new Blocked(parked, versions);
    }

    private void createTopic(EmbeddedChannel channel, String name) {
        CreateTopicsRequestData create = new CreateTopicsRequestData().setTimeoutMs(1_000);
        create.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(1)
                .setReplicationFactor((short) 1));
        RequestHeader header = send(channel, new CreateTopicsRequest.Builder(create).build((short) 7));
        CreateTopicsResponse created = (CreateTopicsResponse) next(channel, header);
        assertThat(created.data().topics().find(name).errorCode()).isEqualTo(Errors.NONE.code());
    }

    private static ApiVersionsRequest apiVersions() {
        return new ApiVersionsRequest(new ApiVersionsRequestData().setClientSoftwareName("t")
                .setClientSoftwareVersion("1"), (short) 3);
    }

    private static FetchRequest fetch(String topic, int maxWaitMs) {
        FetchRequestData data = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1)
                .setMaxBytes(1 << 20);
        data.topics().add(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20))));
        return new FetchRequest(data, (short) 12);
    }

    private RequestHeader send(EmbeddedChannel channel, AbstractRequest request) {
        return HandDrivenPipeline.send(channel, request, "embedded", ++correlationId);
    }

    /** Runs the agents and both channels' tasks until nothing moves, then {@code channel}'s next response. */
    private AbstractResponse next(EmbeddedChannel channel, RequestHeader header) {
        for (int i = 0; i < 3; i++) {
            agents.runUntilIdle();
            for (EmbeddedChannel c : new EmbeddedChannel[] {first, second}) {
                if (c != null) {
                    c.runPendingTasks();
                }
            }
        }
        return HandDrivenPipeline.readResponse(channel, header);
    }
}
