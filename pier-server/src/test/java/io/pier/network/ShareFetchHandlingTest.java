package io.pier.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.pier.common.ManualClock;
import io.pier.metrics.PierMetrics;
import io.pier.protocol.ApiRouter;
import io.pier.runtime.ManualAgents;
import io.pier.service.BrokerServices;
import io.pier.service.HandDrivenServices;
import io.pier.state.TopicMetadata;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShareFetch long polls end to end with no thread and no socket: one EmbeddedChannel per consumer
 * in front of the real request handling, over broker services driven by hand on a manual clock.
 *
 * <p>The consumers behave as the Kafka share consumer does: one ShareFetch in flight at a time,
 * the next one sent as soon as the previous is answered, acknowledgements only on the next one.
 */
class ShareFetchHandlingTest {
    private static final String GROUP = "workers";
    private static final int MAX_WAIT_MS = 500;
    private static final int WINDOW = 100;

    @TempDir
    Path dir;
    private final PierMetrics metrics = new PierMetrics(2);
    private HandDrivenServices broker;
    private ManualAgents agents;
    private ManualClock clock;
    private ApiRouter router;
    private final List<Consumer> consumers = new ArrayList<>();
    private Uuid topicId;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, 2, metrics);
        agents = broker.agents;
        clock = broker.clock;
        BrokerServices services = broker.services;
        router = HandDrivenPipeline.router(broker);
        TopicMetadata topic = agents.await(services.topics().create("jobs", 1, Map.of(), false));
        topicId = topic.id();
        assertThat(agents.await(services.shareGroups().alterConfig(GROUP, Map.of(
                "share.auto.offset.reset", "earliest",
                "share.partition.max.record.locks", String.valueOf(WINDOW)), false)).error())
                .isEqualTo(Errors.NONE);
        // Three windows' worth, in batches of 50, so a window is exactly two batches.
        for (int b = 0; b < 6; b++) {
            SimpleRecord[] records = new SimpleRecord[50];
            for (int i = 0; i < records.length; i++) {
                records[i] = new SimpleRecord(clock.wallMs(), null, ("job-" + (b * 50 + i)).getBytes());
            }
            assertThat(agents.await(services.logs().append(new TopicPartition("jobs", 0),
                    MemoryRecords.withRecords(Compression.NONE, records))).error()).isEqualTo(Errors.NONE);
        }
    }

    @AfterEach
    void stop() {
        consumers.forEach(c -> c.channel.finishAndReleaseAll());
        broker.close();
    }

    /** One share consumer on its own connection. */
    private final class Consumer {
        final String memberId;
        final EmbeddedChannel channel;
        int epoch;
        int correlationId;
        RequestHeader inFlight;

        Consumer(String memberId, int port) {
            this.memberId = memberId;
            this.channel = HandDrivenPipeline.connection(router, port);
            consumers.add(this);
        }

        /** Sends the next ShareFetch, ACCEPTing {@code first..last} (none if first is negative). */
        void fetch(int maxRecords, long first, long last) {
            assertThat(inFlight).as(memberId + " has a ShareFetch in flight").isNull();
            ShareFetchRequestData.FetchPartition partition = new ShareFetchRequestData.FetchPartition()
                    .setPartitionIndex(0);
            if (first >= 0) {
                partition.setAcknowledgementBatches(List.of(new ShareFetchRequestData.AcknowledgementBatch()
                        .setFirstOffset(first).setLastOffset(last).setAcknowledgeTypes(List.of((byte) 1))));
            }
            ShareFetchRequestData.FetchTopicCollection topics = new ShareFetchRequestData.FetchTopicCollection();
            topics.add(new ShareFetchRequestData.FetchTopic().setTopicId(topicId)
                    .setPartitions(new ShareFetchRequestData.FetchPartitionCollection(List.of(partition).iterator())));
            ShareFetchRequestData data = new ShareFetchRequestData().setGroupId(GROUP).setMemberId(memberId)
                    .setShareSessionEpoch(epoch).setMaxWaitMs(MAX_WAIT_MS).setMinBytes(1).setMaxBytes(1 << 20)
                    .setMaxRecords(maxRecords).setBatchSize(maxRecords).setTopics(topics);
            inFlight = send(new ShareFetchRequest.Builder(data).build((short) 2));
            epoch++;
        }

        private RequestHeader send(AbstractRequest request) {
            return HandDrivenPipeline.send(channel, request, memberId, ++correlationId);
        }

        /** The answer to the ShareFetch in flight once the agents are idle, or null while it waits. */
        ShareFetchResponseData.PartitionData answer() {
            agents.runUntilIdle();
            channel.runPendingTasks();
            ShareFetchResponse response = (ShareFetchResponse) HandDrivenPipeline.readResponse(channel, inFlight);
            if (response == null) {
                return null;
            }
            inFlight = null;
            assertThat(response.data().errorCode()).isEqualTo(Errors.NONE.code());
            return response.data().responses().isEmpty() ? new ShareFetchResponseData.PartitionData()
                    : response.data().responses().iterator().next().partitions().get(0);
        }
    }

    private static List<Long> acquired(ShareFetchResponseData.PartitionData partition) {
        List<Long> bounds = new ArrayList<>();
        for (ShareFetchResponseData.AcquiredRecords r : partition.acquiredRecords()) {
            bounds.add(r.firstOffset());
            bounds.add(r.lastOffset());
        }
        return bounds;
    }

    @Test
    void shouldAnswerTheFetchOfTheMemberWhoseOwnRecordsFillTheWindowSoItsAcknowledgementsGetThrough() {
        Consumer a = new Consumer("member-a", 40_001);
        Consumer b = new Consumer("member-b", 40_002);
        a.fetch(WINDOW, -1, -1);
        assertThat(acquired(a.answer())).containsExactly(0L, 99L);
        b.fetch(WINDOW, -1, -1);
        assertThat(b.answer()).as("the window is full: b waits for room").isNull();

        // a's client sends its next fetch at once, before its application has seen the records;
        // their acknowledgements can only go with the fetch after this one.
        clock.advance(4);
        a.fetch(WINDOW, -1, -1);
        assertThat(a.answer()).isNull();
        clock.advance(1);
        ShareFetchResponseData.PartitionData early = a.answer();
        assertThat(early).as("answered after 1 ms, not at MaxWaitMs").isNotNull();
        assertThat(early.acquiredRecords()).isEmpty();
        assertThat(b.answer()).as("b is not what holds the window up: it keeps waiting").isNull();

        // a acknowledges without asking for more records: the room goes to the fetch waiting for it.
        a.fetch(0, 0, 99);
        assertThat(a.answer().acquiredRecords()).as("a's fetch carried acknowledgements: answered at once")
                .isEmpty();
        ShareFetchResponseData.PartitionData room = b.answer();
        assertThat(room).as("a's acknowledgements made room, and b was woken").isNotNull();
        assertThat(acquired(room)).containsExactly(100L, 199L);
        a.fetch(WINDOW, -1, -1);
        assertThat(a.answer()).as("now b holds the window up, a waits").isNull();
        clock.advance(MAX_WAIT_MS);
        assertThat(a.answer().acquiredRecords()).isEmpty();

        assertThat(exposition()).contains(
                "pier_long_poll_answers_total{api=\"ShareFetch\",outcome=\"at_once\"} 2",
                "pier_long_poll_answers_total{api=\"ShareFetch\",outcome=\"cut_short\"} 1",
                "pier_long_poll_answers_total{api=\"ShareFetch\",outcome=\"woken\"} 1",
                "pier_long_poll_answers_total{api=\"ShareFetch\",outcome=\"max_wait\"} 1");
    }

    private String exposition() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape(),
                    EscapingScheme.UNDERSCORE_ESCAPING);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void shouldGiveTheRoomAcknowledgementsMakeToTheFetchThatCarriedThemWithOneShareStateWrite() {
        Consumer a = new Consumer("member-a", 40_001);
        Consumer b = new Consumer("member-b", 40_002);
        a.fetch(WINDOW, -1, -1);
        assertThat(acquired(a.answer())).containsExactly(0L, 99L);
        b.fetch(WINDOW, -1, -1);
        assertThat(b.answer()).as("the window is full: b waits for room").isNull();
        long writesBefore = broker.shareStateFlushes();

        // The records a accepts leave the window with the write of its acknowledgements, so the
        // acquisition of the same fetch does not wait for that write: both go in one.
        a.fetch(WINDOW, 0, 99);

        assertThat(acquired(a.answer())).containsExactly(100L, 199L);
        assertThat(broker.shareStateFlushes() - writesBefore).as("acknowledgements and acquisition in one fsync")
                .isEqualTo(1);
        assertThat(b.answer()).as("the window is full again: b keeps waiting").isNull();
        clock.advance(MAX_WAIT_MS);
        assertThat(b.answer().acquiredRecords()).isEmpty();
    }

    @Test
    void shouldSlowTheEarlyAnswersDownAsTheMemberKeepsHoldingItsRecords() {
        Consumer a = new Consumer("member-a", 40_001);
        Consumer b = new Consumer("member-b", 40_002);
        a.fetch(WINDOW, -1, -1);
        assertThat(acquired(a.answer())).containsExactly(0L, 99L);
        b.fetch(WINDOW, -1, -1);
        assertThat(b.answer()).isNull();

        // a's application takes its time: each empty answer comes after as long as a's fetches
        // have found the window held up so far, so its client does not spin; never after MaxWaitMs.
        clock.advance(2);
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            a.fetch(WINDOW, -1, -1);
            long sent = clock.monoMs();
            ShareFetchResponseData.PartitionData answer = a.answer();
            for (int ms = 0; answer == null && ms < MAX_WAIT_MS; ms++) {
                clock.advance(1);
                answer = a.answer();
            }
            assertThat(answer).as("answer %d", i).isNotNull();
            assertThat(answer.acquiredRecords()).isEmpty();
            waits.add(clock.monoMs() - sent);
        }
        assertThat(waits).containsExactly(1L, 1L, 2L, 4L, 8L, 16L, 32L, 64L, 128L, 256L, 500L, 500L);
        assertThat(b.answer()).as("b's own MaxWaitMs passed long ago").isNotNull();
    }
}
