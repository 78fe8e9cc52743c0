package io.pier.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.pier.group.HeartbeatRequest;
import io.pier.protocol.ApiRequest;
import io.pier.protocol.FetchHandler;
import io.pier.protocol.OffsetHandlers;
import io.pier.runtime.ManualAgents;
import io.pier.share.AcquireLimits;
import io.pier.share.AcquireMode;
import io.pier.share.AcquiredRange;
import io.pier.state.SharePartitionKey;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.FetchResponseData.PartitionData;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read side of transactions through Fetch, ListOffsets and share acquisition, over broker
 * services driven by hand (durable logs, one shard): markers written through {@link
 * Logs#writeMarker}, transactional data appended to the log directly.
 */
class TransactionalFetchTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final long A = 100;
    private static final long B = 200;

    @TempDir
    Path dir;
    private HandDrivenServices broker;
    private ManualAgents agents;
    private BrokerServices services;
    private FetchHandler fetch;
    private OffsetHandlers offsets;

    @BeforeEach
    void start() throws Exception {
        broker = new HandDrivenServices(dir, 1);
        agents = broker.agents;
        services = broker.services;
        agents.await(services.topics().create("orders", 1, Map.of(), false));
        fetch = new FetchHandler(services.topics(), services.logs(), services.polls(), io.pier.protocol.Access.ALLOW_ALL);
        offsets = new OffsetHandlers(services.logs(), io.pier.protocol.Access.ALLOW_ALL);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    /** Appends on the partition's log as its shard would (no thread here but the test's). */
    private void appendTxn(long producerId, int firstSeq, String... values) throws IOException {
        SimpleRecord[] rs = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            rs[i] = new SimpleRecord(broker.clock.wallMs(), null, values[i].getBytes());
        }
        services.partitions().get(TP).log().append(MemoryRecords.withTransactionalRecords(Compression.NONE,
                producerId, (short) 0, firstSeq, rs));
    }

    private void appendPlain(String value) throws Exception {
        assertThat(agents.await(services.logs().append(TP, MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(broker.clock.wallMs(), null, value.getBytes())))).error()).isEqualTo(Errors.NONE);
    }

    private void marker(long producerId, boolean commit) throws Exception {
        assertThat(agents.await(services.logs().writeMarker(TP, producerId, (short) 0, 0, commit)).error())
                .isEqualTo(Errors.NONE);
    }

    private CompletableFuture<AbstractResponse> sendFetch(long offset, IsolationLevel isolation, int maxWaitMs,
            int minBytes) {
        FetchRequest.Builder builder = FetchRequest.Builder.forConsumer((short) 12, maxWaitMs, minBytes,
                Map.of(TP, new FetchRequest.PartitionData(Uuid.ZERO_UUID, offset, 0, 1 << 20, Optional.empty())))
                .isolationLevel(isolation);
        return fetch.handle(request(ApiKeys.FETCH, (short) 12, builder.build((short) 12)));
    }

    private PartitionData fetch(long offset, IsolationLevel isolation) throws Exception {
        return partitionOf(agents.await(sendFetch(offset, isolation, 0, 0)));
    }

    private static PartitionData partitionOf(AbstractResponse response) {
        return ((FetchResponse) response).data().responses().get(0).partitions().get(0);
    }

    private static ApiRequest request(ApiKeys key, short version, AbstractRequest body) {
        return new ApiRequest(new RequestHeader(key, version, "test", 1), body, null);
    }

    @Test
    void shouldReturnOnlyRecordsBelowTheLastStableOffsetWithTheAbortedTransactionsToReadCommitted()
            throws Exception {
        appendTxn(B, 0, "b0"); // 0
        marker(B, false); // 1
        appendPlain("p"); // 2
        appendTxn(A, 0, "a0", "a1"); // 3..4, ongoing
        appendPlain("q"); // 5, and the flush that makes the data durable

        PartitionData committed = fetch(0, IsolationLevel.READ_COMMITTED);
        assertThat(committed.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(committed.highWatermark()).isEqualTo(6);
        assertThat(committed.lastStableOffset()).isEqualTo(3);
        assertThat(batchOffsets(committed.records())).containsExactly(0L, 1L, 2L);
        assertThat(committed.abortedTransactions()).containsExactly(
                new FetchResponseData.AbortedTransaction().setProducerId(B).setFirstOffset(0));

        PartitionData uncommitted = fetch(0, IsolationLevel.READ_UNCOMMITTED);
        assertThat(uncommitted.lastStableOffset()).as("the real LSO, as Kafka reports it").isEqualTo(3);
        assertThat(batchOffsets(uncommitted.records())).containsExactly(0L, 1L, 2L, 3L, 5L);
        assertThat(uncommitted.abortedTransactions()).isNullOrEmpty();

        marker(A, true); // 6
        PartitionData after = fetch(3, IsolationLevel.READ_COMMITTED);
        assertThat(after.lastStableOffset()).isEqualTo(7);
        assertThat(batchOffsets(after.records())).containsExactly(3L, 5L, 6L);
        assertThat(after.abortedTransactions()).isEmpty();
    }

    @Test
    void shouldWakeAReadCommittedFetchParkedAtTheLastStableOffsetWhenAMarkerMovesIt() throws Exception {
        appendTxn(A, 0, "a0"); // 0, ongoing
        appendPlain("p"); // 1
        CompletableFuture<AbstractResponse> parked = sendFetch(0, IsolationLevel.READ_COMMITTED, 60_000, 1);
        agents.runUntilIdle();
        assertThat(parked).as("nothing is stable yet").isNotDone();

        appendPlain("q"); // 2: the high watermark moves, the LSO does not
        agents.runUntilIdle();
        assertThat(parked).isNotDone();

        marker(A, true); // 3
        PartitionData woken = partitionOf(agents.await(parked));
        assertThat(woken.lastStableOffset()).isEqualTo(4);
        assertThat(batchOffsets(woken.records())).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void shouldAnswerTheLastStableOffsetForLatestUnderReadCommitted() throws Exception {
        appendPlain("p"); // 0
        appendTxn(A, 0, "a0"); // 1, ongoing
        appendPlain("q"); // 2

        assertThat(latest(IsolationLevel.READ_COMMITTED)).isEqualTo(1);
        assertThat(latest(IsolationLevel.READ_UNCOMMITTED)).isEqualTo(3);
        marker(A, false);
        assertThat(latest(IsolationLevel.READ_COMMITTED)).isEqualTo(4);
    }

    private long latest(IsolationLevel isolation) throws Exception {
        ListOffsetsRequest body = ListOffsetsRequest.Builder.forConsumer(false, isolation)
                .setTargetTimes(List.of(new ListOffsetsTopic().setName(TP.topic()).setPartitions(List.of(
                        new ListOffsetsPartition().setPartitionIndex(0)
                                .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP)))))
                .build((short) 7);
        ListOffsetsResponse response = (ListOffsetsResponse) agents.await(
                offsets.listOffsets(request(ApiKeys.LIST_OFFSETS, (short) 7, body)));
        var p = response.data().topics().get(0).partitions().get(0);
        assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
        return p.offset();
    }

    @Test
    void shouldRefuseATransactionalBatchForAPartitionOutsideAnyTransaction() throws Exception {
        // What the Produce path asks before appending a transactional batch (KIP-890 part 1).
        assertThat(agents.await(services.transactions().verifyPartition("no-such-id", A, (short) 0, TP)))
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void shouldFenceAMarkerWithAStaleEpoch() throws Exception {
        services.partitions().get(TP).log().append(MemoryRecords.withTransactionalRecords(Compression.NONE, A,
                (short) 2, 0, new SimpleRecord(1L, null, "x".getBytes())));
        assertThat(agents.await(services.logs().writeMarker(TP, A, (short) 1, 0, true)).error())
                .isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(agents.await(services.logs().writeMarker(new TopicPartition("none", 0), A, (short) 2, 0, true))
                .error()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    void shouldNeverHandAMarkerToAShareGroup() throws Exception {
        appendTxn(A, 0, "a0", "a1"); // 0..1
        marker(A, true); // 2
        appendPlain("p"); // 3
        marker(B, false); // 4: a marker with no transaction, written all the same
        String group = "workers";
        assertThat(agents.await(services.shareGroups().alterConfig(group,
                Map.of("share.auto.offset.reset", "earliest"), false)).error()).isEqualTo(Errors.NONE);
        assertThat(agents.await(services.shareGroups().heartbeat(new HeartbeatRequest(group, "m",
                HeartbeatRequest.JOIN_EPOCH, null, List.of(TP.topic()), "test", "/127.0.0.1"))).error())
                .isEqualTo(Errors.NONE);
        SharePartitionKey key = new SharePartitionKey(group, services.topics().topic(TP.topic()).id(), 0);

        ShareService.Acquired acquired = agents.await(services.shares().acquire(TP, key, "m",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), 1 << 20, null));

        assertThat(acquired.ranges()).extracting(AcquiredRange::firstOffset, AcquiredRange::lastOffset)
                .containsExactly(tuple(0L, 1L), tuple(3L, 3L));
        assertThat(agents.await(services.shareOffsets().summary(TP, key)).startOffset()).isZero();
    }

    /** A share group reading from the earliest offset at {@code isolation}, with member "m" joined. */
    private SharePartitionKey shareGroup(String group, String isolation) throws Exception {
        assertThat(agents.await(services.shareGroups().alterConfig(group,
                Map.of("share.auto.offset.reset", "earliest", "share.isolation.level", isolation), false)).error())
                .isEqualTo(Errors.NONE);
        assertThat(agents.await(services.shareGroups().heartbeat(new HeartbeatRequest(group, "m",
                HeartbeatRequest.JOIN_EPOCH, null, List.of(TP.topic()), "test", "/127.0.0.1"))).error())
                .isEqualTo(Errors.NONE);
        return new SharePartitionKey(group, services.topics().topic(TP.topic()).id(), 0);
    }

    private List<List<Long>> acquire(SharePartitionKey key, int maxBytes, Partition.DataListener wake)
            throws Exception {
        ShareService.Acquired acquired = agents.await(services.shares().acquire(TP, key, "m",
                new AcquireLimits(100, 100, AcquireMode.BATCH_OPTIMIZED), maxBytes, wake));
        assertThat(acquired.error()).isEqualTo(Errors.NONE);
        List<List<Long>> ranges = new ArrayList<>();
        for (AcquiredRange r : acquired.ranges()) {
            ranges.add(List.of(r.firstOffset(), r.lastOffset()));
        }
        return ranges;
    }

    @Test
    void shouldGiveAReadCommittedShareGroupOnlyCommittedRecordsAndWakeItWhenAMarkerMovesTheLastStableOffset()
            throws Exception {
        appendTxn(A, 0, "a0", "a1"); // 0..1
        appendPlain("p"); // 2
        marker(A, false); // 3: A aborted
        appendTxn(B, 0, "b0"); // 4, ongoing
        appendPlain("q"); // 5
        SharePartitionKey committed = shareGroup("committed", "read_committed");
        SharePartitionKey uncommitted = shareGroup("uncommitted", "read_uncommitted");

        assertThat(acquire(committed, 1 << 20, null)).containsExactly(List.of(2L, 2L));
        assertThat(agents.await(services.shareOffsets().summary(TP, committed)).startOffset())
                .as("the aborted records do not hold the start offset back").isEqualTo(2);
        assertThat(acquire(uncommitted, 1 << 20, null)).containsExactly(List.of(0L, 2L), List.of(4L, 5L));

        int[] woken = {0};
        Partition.DataListener wake = new Partition.DataListener() {
            @Override
            public boolean isDone() {
                return false;
            }

            @Override
            public void onDataChange() {
                woken[0]++;
            }
        };
        assertThat(acquire(committed, 1 << 20, wake)).as("nothing below the last stable offset (4)").isEmpty();
        marker(B, true); // 6
        assertThat(woken[0]).as("the marker woke the parked share fetch").isEqualTo(1);
        assertThat(acquire(committed, 1 << 20, null)).containsExactly(List.of(4L, 5L));
    }

    @Test
    void shouldReadOnPastReadsHoldingOnlyAbortedRecords() throws Exception {
        appendTxn(A, 0, "a0"); // 0
        appendTxn(A, 1, "a1"); // 1
        appendTxn(A, 2, "a2"); // 2
        marker(A, false); // 3
        appendPlain("p"); // 4
        SharePartitionKey key = shareGroup("committed", "read_committed");

        // A byte budget of 1 reads one batch at a time: four reads find nothing to acquire.
        assertThat(acquire(key, 1, null)).containsExactly(List.of(4L, 4L));
        assertThat(agents.await(services.shareOffsets().summary(TP, key)).startOffset()).isEqualTo(4);
    }

    /** Base offsets of the batches a fetch returned, control batches included. */
    private static List<Long> batchOffsets(BaseRecords records) throws IOException {
        Collecting out = new Collecting();
        Send send = records.toSend();
        while (!send.completed()) {
            send.writeTo(out);
        }
        List<Long> bases = new ArrayList<>();
        for (RecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(out.bytes.toByteArray())).batches()) {
            bases.add(b.baseOffset());
        }
        return bases;
    }

    /** A socket that keeps what it is sent. */
    private static final class Collecting implements TransferableChannel {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            ByteBuffer buf = ByteBuffer.allocate((int) count);
            int n = fileChannel.read(buf, position);
            bytes.write(buf.array(), 0, Math.max(0, n));
            return Math.max(0, n);
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            byte[] b = new byte[n];
            src.get(b);
            bytes.write(b, 0, n);
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            long n = 0;
            for (int i = offset; i < offset + length; i++) {
                n += write(srcs[i]);
            }
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }
}
