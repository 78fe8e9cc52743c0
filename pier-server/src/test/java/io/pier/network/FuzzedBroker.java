package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.pier.log.AllocationMeter;
import io.pier.log.TestFiles;
import io.pier.protocol.ApiHandler;
import io.pier.protocol.ApiRouter;
import io.pier.service.Futures;
import io.pier.service.HandDrivenServices;
import io.pier.service.TopicService;
import io.pier.state.TopicMetadata;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntSupplier;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * A whole broker for fuzz targets, driven by hand as in {@link RequestHandlingTest}: the real
 * frame decoder, request handler and API handlers on an EmbeddedChannel, over broker services
 * with no thread. One per test class (opening one costs far more than an input); each input gets
 * a fresh connection.
 *
 * <p>Every handler is wrapped so that an exception other than a Kafka {@link ApiException},
 * thrown or completing its future, is remembered: the client would only see
 * UNKNOWN_SERVER_ERROR, and the input that caused it is a finding.
 */
final class FuzzedBroker implements AutoCloseable {
    static final int MAX_FRAME_BYTES = 1 << 20;
    /**
     * What an input may allocate per partition it creates or deletes, beyond the bound on its
     * size: a CreateTopics or CreatePartitions request of 40 bytes may legitimately create up to
     * 10,000 partitions per topic (TopicService's cap), and a DeleteTopics as small delete all an
     * earlier input created. Opening one allocated about 14 KB (a 6,915-partition
     * CreatePartitions, measured while fuzzing), deleting one about as much.
     */
    static final long BYTES_PER_PARTITION_CHANGED = 32L << 10;
    /** An input may make the broker allocate this much, plus the two bounds per byte and per partition. */
    static final long BASE_ALLOCATION = 16L << 20;
    static final long BYTES_PER_INPUT_BYTE = 64;
    static final String TOPIC = "fuzz";
    /**
     * {@code group.max.size} and {@code group.consumer.max.size} of the fuzzed broker (Kafka's
     * defaults are unbounded). Its clock stands still, so no member ever times out: a JoinGroup v0
     * input adds members for good (v0 needs no second join), and one replayed on one broker made
     * each later JoinGroup answer and rebalance walk every member gathered so far, 1.4 KB more
     * allocated per replay, until after 3.7 million inputs one went over the allocation bound
     * (finding 7 of docs/reliability.md). Past the cap a join gets GROUP_MAX_SIZE_REACHED, a
     * path worth fuzzing too.
     */
    static final int GROUP_MAX_SIZE = 100;
    /**
     * {@code log.retention.check.interval.ms} of the fuzzed broker (Kafka's default: 5 minutes).
     * A retention pass walks every partition, and RequestFuzzTest moves the clock a minute for
     * each input left waiting on a long poll, so at Kafka's interval a pass came every few inputs:
     * 43% of the target's CPU (async-profiler) once inputs had created thousands of partitions.
     * An hour still runs one every 60 such inputs.
     */
    static final long RETENTION_CHECK_INTERVAL_MS = 3_600_000;
    /**
     * Partition counts a fuzzed CreateTopics or CreatePartitions may ask for before they are cut to
     * this, counts above Pier's per-topic limit excepted (their refusal stays fuzzed). Opening a
     * partition makes a folder and its files, and the inputs Jazzer keeps ask for thousands: with
     * up to 10,000 per topic, creating partitions and deleting a crowded broker's folder
     * ({@link #renewIfCrowded}) took 82% of RequestFuzzTest's CPU (async-profiler), at under
     * 1,000 executions/s.
     */
    static final int MAX_FUZZED_PARTITIONS = 100;

    final Path dir;
    final HandDrivenServices broker;
    final ApiRouter router = new ApiRouter();
    /** The APIs served, each with its version range: {key, min, max}. */
    final List<short[]> served = new ArrayList<>();
    /** The id of {@link #TOPIC}, known once it is created. */
    Uuid topicId;
    private final List<Throwable> handlerFailures = new ArrayList<>();
    private int correlationId;

    FuzzedBroker() throws Exception {
        dir = TestFiles.scratchDirectory("pier-fuzz-broker");
        broker = new HandDrivenServices(dir, 2, null, Map.of("group.max.size", String.valueOf(GROUP_MAX_SIZE),
                "group.consumer.max.size", String.valueOf(GROUP_MAX_SIZE),
                "log.retention.check.interval.ms", String.valueOf(RETENTION_CHECK_INTERVAL_MS)));
        ApiRouter real = HandDrivenPipeline.router(broker);
        for (ApiKeys key : ApiKeys.values()) {
            short min = -1;
            short max = -1;
            for (short v = key.oldestVersion(); v <= key.latestVersion(true); v++) {
                if (real.supports(key, v)) {
                    min = min < 0 ? v : min;
                    max = v;
                }
            }
            if (min >= 0) {
                served.add(new short[] {key.id, min, max});
                router.register(key, min, max, watched(real));
            }
        }
        createTopic();
    }

    private ApiHandler watched(ApiRouter real) {
        return request -> {
            capPartitionCounts(request.body());
            CompletableFuture<AbstractResponse> response;
            try {
                response = real.route(request);
            } catch (RuntimeException e) {
                remember(e);
                throw e;
            }
            return response.whenComplete((r, t) -> {
                if (t != null) {
                    remember(Futures.unwrap(t));
                }
            });
        };
    }

    /** Cuts the partition counts of {@code body} as {@link #MAX_FUZZED_PARTITIONS} says, in place. */
    private static void capPartitionCounts(AbstractRequest body) {
        if (body instanceof CreateTopicsRequest create) {
            create.data().topics().forEach(t -> t.setNumPartitions(capped(t.numPartitions())));
        } else if (body instanceof CreatePartitionsRequest more) {
            more.data().topics().forEach(t -> t.setCount(capped(t.count())));
        }
    }

    private static int capped(int count) {
        return count > MAX_FUZZED_PARTITIONS && count <= TopicService.MAX_PARTITIONS_PER_TOPIC
                ? MAX_FUZZED_PARTITIONS : count;
    }

    private void remember(Throwable t) {
        if (!(t instanceof ApiException)) {
            handlerFailures.add(t);
        }
    }

    /** Fails with the first handler exception that was not a Kafka error since the last call. */
    void assertNoHandlerFailed(String what) {
        if (!handlerFailures.isEmpty()) {
            Throwable first = handlerFailures.get(0);
            handlerFailures.clear();
            throw new AssertionError(what + ": a handler failed with " + first, first);
        }
    }

    /**
     * Runs {@code input} (which gives this broker one input and returns the bytes it received)
     * and checks what the handling thread allocated against the bound: {@link #BASE_ALLOCATION},
     * plus {@link #BYTES_PER_INPUT_BYTE} per byte received and {@link #BYTES_PER_PARTITION_CHANGED}
     * per partition created or deleted. The first input down a new path loads classes, which says
     * nothing of the input: it is run and measured again.
     */
    void assertAllocationBounded(String what, IntSupplier input) {
        long partitions = partitionCount();
        AllocationMeter.Reading reading = AllocationMeter.start();
        int received = input.getAsInt();
        if (reading.classesLoaded()) {
            partitions = partitionCount();
            reading = AllocationMeter.start();
            received = input.getAsInt();
        }
        long allocated = reading.bytes();
        long changed = Math.abs(partitionCount() - partitions);
        assertThat(allocated).as("bytes allocated for %s, %d bytes received, creating or deleting %d partitions",
                what, received, changed).isLessThanOrEqualTo(BASE_ALLOCATION + BYTES_PER_INPUT_BYTE * received
                        + BYTES_PER_PARTITION_CHANGED * changed);
    }

    /** Partitions beyond which a target replaces its broker: see {@link #renewIfCrowded}. */
    static final long MAX_PARTITIONS = 20_000;

    /**
     * This broker, or a fresh one in its place once inputs have created more than {@link
     * #MAX_PARTITIONS} partitions. Every agent duty cycle, and so every input, walks all of
     * them, and one CreateTopics input may add 10,000: in one long run of RequestFuzzTest the
     * broker held 17,677 partitions after five minutes, and the run had slowed from 3,200 to
     * 2,700 executions/s on average. The bound is high because a fresh broker makes the next
     * CreateTopics of a name the corpus keeps create its partitions again, instead of answering
     * TOPIC_ALREADY_EXISTS: renewing past 1,000 partitions, every few seconds, cut the run to
     * about 1,000 executions/s.
     */
    FuzzedBroker renewIfCrowded() throws Exception {
        if (partitionCount() <= MAX_PARTITIONS) {
            return this;
        }
        close();
        return new FuzzedBroker();
    }

    /** Partitions of every topic the broker has, for {@link #BYTES_PER_PARTITION_CHANGED}. */
    long partitionCount() {
        long count = 0;
        for (TopicMetadata topic : broker.services.topics().topics()) {
            count += topic.partitionCount();
        }
        return count;
    }

    /**
     * Gives a new connection a byte stream: {@code input}'s first byte is the chunk size the rest
     * arrives in (0: all at once, else 1..255 bytes per read), as {@link FrameFuzzTest} defines it.
     * Runs the broker after each chunk and drops the responses; rethrows what reached the end of
     * the pipeline unhandled.
     */
    void feed(byte[] input) {
        int chunk = input[0] & 0xff;
        EmbeddedChannel channel = connect();
        try {
            for (int from = 1; from < input.length && channel.isOpen(); ) {
                int to = chunk == 0 ? input.length : Math.min(input.length, from + chunk);
                channel.writeInbound(Unpooled.wrappedBuffer(input, from, to - from));
                settle(channel);
                responses(channel);
                from = to;
            }
            channel.checkException();
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    EmbeddedChannel connect() {
        return HandDrivenPipeline.connection(40_000, MAX_FRAME_BYTES, new RequestChannelHandler(router));
    }

    /**
     * Lets the agents and the channel's tasks run until nothing moves: up to 10 passes, ending at
     * the first in which the agents did no work and the channel had no task. The clock stands
     * still meanwhile, so after such a pass the rest could only repeat it, and each idle pass
     * costs a duty cycle of every agent: running all 10 every time was most of an input's time.
     */
    void settle(EmbeddedChannel channel) {
        for (int i = 0; i < 10; i++) {
            int work = broker.agents.round();
            if (work != 0) {
                broker.agents.runUntilIdle(); // fails if the agents never go idle
            }
            boolean tasks = channel.hasPendingTasks();
            channel.runPendingTasks();
            if (work == 0 && !tasks) {
                return;
            }
        }
    }

    /** The response frames written so far, each checked to be exactly as long as its size prefix says. */
    static List<ByteBuffer> responses(EmbeddedChannel channel) {
        List<ByteBuffer> out = new ArrayList<>();
        for (Object o = channel.readOutbound(); o != null; o = channel.readOutbound()) {
            try {
                if (o instanceof ByteBuf buf) {
                    int size = buf.readInt();
                    assertThat(buf.readableBytes()).as("response frame size").isEqualTo(size);
                    ByteBuffer bytes = ByteBuffer.allocate(size);
                    buf.readBytes(bytes);
                    out.add(bytes.flip());
                }
            } finally {
                ReferenceCountUtil.release(o);
            }
        }
        return out;
    }

    static ByteBuf frame(RequestHeader header, AbstractRequest request) {
        ByteBuffer payload = request.serializeWithHeader(header);
        return Unpooled.buffer(4 + payload.remaining()).writeInt(payload.remaining()).writeBytes(payload);
    }

    RequestHeader header(ApiKeys key, short version) {
        return new RequestHeader(key, version, "fuzz", ++correlationId);
    }

    /** A fresh connection still gets ApiVersions and Metadata answered. */
    void assertServes() {
        EmbeddedChannel channel = connect();
        try {
            RequestHeader versionsHeader = header(ApiKeys.API_VERSIONS, (short) 3);
            channel.writeInbound(frame(versionsHeader, new ApiVersionsRequest(new ApiVersionsRequestData()
                    .setClientSoftwareName("fuzz").setClientSoftwareVersion("1"), (short) 3)));
            RequestHeader metadataHeader = header(ApiKeys.METADATA, (short) 12);
            channel.writeInbound(frame(metadataHeader, new MetadataRequest(new MetadataRequestData()
                    .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(TOPIC))),
                    (short) 12)));
            settle(channel);
            List<ByteBuffer> out = responses(channel);
            assertThat(out).as("ApiVersions and Metadata answered").hasSize(2);
            ApiVersionsResponse versions = (ApiVersionsResponse) AbstractResponse.parseResponse(out.get(0),
                    versionsHeader);
            assertThat(versions.data().errorCode()).isEqualTo(Errors.NONE.code());
            MetadataResponse metadata = (MetadataResponse) AbstractResponse.parseResponse(out.get(1), metadataHeader);
            assertThat(metadata.data().topics().find(TOPIC).errorCode()).isEqualTo(Errors.NONE.code());
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    private void createTopic() {
        EmbeddedChannel channel = connect();
        try {
            CreateTopicsRequestData create = new CreateTopicsRequestData().setTimeoutMs(1_000);
            create.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(TOPIC).setNumPartitions(2)
                    .setReplicationFactor((short) 1));
            channel.writeInbound(frame(header(ApiKeys.CREATE_TOPICS, (short) 7),
                    new CreateTopicsRequest.Builder(create).build((short) 7)));
            settle(channel);
            List<ByteBuffer> out = responses(channel);
            assertThat(out).hasSize(1);
            CreateTopicsResponse created = (CreateTopicsResponse) AbstractResponse.parseResponse(out.get(0),
                    new RequestHeader(ApiKeys.CREATE_TOPICS, (short) 7, "fuzz", correlationId));
            topicId = created.data().topics().find(TOPIC).topicId();
        } finally {
            channel.finishAndReleaseAll();
        }
    }

    @Override
    public void close() throws IOException {
        broker.close();
        TestFiles.deleteTree(dir);
    }
}
