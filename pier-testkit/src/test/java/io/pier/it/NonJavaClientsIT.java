package io.pier.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.testkit.PierExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Real non-Java Kafka clients against the broker: confluent-kafka (librdkafka), kafka-python,
 * kafkajs and kcat, each driven by a small script in {@code src/test/clients}. Each client
 * creates, lists and deletes a topic with its admin API, then per codec produces 1,000 records
 * with keys, values and headers and reads them back without a group (assign, from the
 * beginning), checking every field and the partition's watermarks. The test then reads the
 * stored batches itself, so a client that silently stopped compressing (as librdkafka does when
 * it thinks the broker lacks a codec) fails here.
 *
 * <p>A client that is not installed skips its test with a message naming the package; with
 * {@code PIER_CLIENTS_REQUIRED=1} (set by {@code .ci/run}, which installs them) it fails instead.
 */
@Timeout(300)
class NonJavaClientsIT {
    private static final int RECORDS = 1000;
    private static final List<String> ALL_CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(3);
    private static final short FETCH_VERSION = 12;

    /**
     * No initial rebalance delay: the group scripts wait for both members' assignments before
     * producing, so the 3 s Kafka waits for more members to join an empty group only slows them.
     */
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("num.partitions", "1",
            "group.initial.rebalance.delay.ms", "0");

    private int correlationId;

    @Test
    void confluentKafkaRoundTripsEveryCodec() throws IOException {
        ExternalClients.requirePythonModule("confluent_kafka", "python3-confluent-kafka");

        List<String> out = runPython("confluent-kafka", "confluent_kafka_roundtrip.py", "ck", ALL_CODECS);

        assertRoundTrips(out, "ck", ALL_CODECS);
    }

    @Test
    void confluentKafkaConsumerGroupSharesPartitionsAndCommits() throws IOException {
        ExternalClients.requirePythonModule("confluent_kafka", "python3-confluent-kafka");

        assertGroupRun(runPythonGroup("confluent-kafka group", "confluent_kafka_group.py", "ck-group"));
    }

    private static List<String> runPythonGroup(String name, String script, String topic) throws IOException {
        return ExternalClients.runScript(name, List.of(ExternalClients.SYSTEM_PYTHON.toString(), script,
                PIER.bootstrapServers(), topic, Integer.toString(RECORDS)), Map.of("PYTHONDONTWRITEBYTECODE", "1"),
                SCRIPT_TIMEOUT);
    }

    /** Both members read, every record once, all committed, and a later member found nothing left. */
    private static void assertGroupRun(List<String> out) {
        assertThat(out).anySatisfy(line -> assertThat(line)
                .containsPattern(field("step", "\"group\""))
                .containsPattern(field("consumed", Integer.toString(RECORDS)))
                .containsPattern(field("duplicates", "0"))
                .containsPattern(field("committed", Integer.toString(RECORDS)))
                .containsPattern(field("both_members_read", "true"))
                .containsPattern(field("leftover", "0"))
                .containsPattern(field("late_assigned", "4")));
    }

    @Test
    void kafkaPythonConsumerGroupSharesPartitionsAndCommits() throws IOException {
        ExternalClients.requirePythonModule("kafka", "python3-kafka");

        assertGroupRun(runPythonGroup("kafka-python group", "kafka_python_group.py", "kp-group"));
    }

    @Test
    void kafkaPythonRoundTripsEveryCodec() throws IOException {
        ExternalClients.requirePythonModule("kafka", "python3-kafka");
        // kafka-python compresses with these optional modules; zstd needs python3-zstandard.
        ExternalClients.requirePythonModule("snappy", "python3-snappy");
        ExternalClients.requirePythonModule("lz4", "python3-lz4");
        ExternalClients.requirePythonModule("zstandard", "python3-zstandard");

        List<String> out = runPython("kafka-python", "kafka_python_roundtrip.py", "kp", ALL_CODECS);

        assertRoundTrips(out, "kp", ALL_CODECS);
    }

    @Test
    void kafkajsRoundTripsNoneGzipSnappyAndLz4() throws IOException {
        String nodePath = ExternalClients.requireKafkajs();
        List<String> codecs = List.of("none", "gzip", "snappy", "lz4");
        ExternalClients.require(ExternalClients.nodeModulePresent(nodePath, "kafkajs-snappy")
                && ExternalClients.nodeModulePresent(nodePath, "lz4js"),
                "kafkajs-snappy and lz4js are missing under " + nodePath + " (run .ci/run)");

        List<String> out = runNode("kafkajs", nodePath, "kj", codecs);

        assertRoundTrips(out, "kj", codecs);
    }

    /** kafkajs has no zstd of its own; its plugin needs a native build, which .ci/run does not do. */
    @Test
    void kafkajsConsumerGroupSharesPartitionsAndCommits() throws IOException {
        String nodePath = ExternalClients.requireKafkajs();

        List<String> out = ExternalClients.runScript("kafkajs group", List.of("node", "kafkajs_group.js",
                PIER.bootstrapServers(), "kj-group", Integer.toString(RECORDS)),
                Map.of("NODE_PATH", nodePath, "KAFKAJS_NO_PARTITIONER_WARNING", "1"), SCRIPT_TIMEOUT);

        assertGroupRun(out);
    }

    @Test
    void kafkajsRoundTripsZstdWhenItsNativeCodecIsInstalled() throws IOException {
        String nodePath = ExternalClients.requireKafkajs();
        Assumptions.assumeTrue(ExternalClients.nodeModulePresent(nodePath, "@kafkajs/zstd"),
                "kafkajs zstd not tested: @kafkajs/zstd (a native node-gyp build) is not installed under " + nodePath);

        List<String> out = runNode("kafkajs-zstd", nodePath, "kjz", List.of("zstd"));

        assertRoundTrips(out, "kjz", List.of("zstd"));
    }

    @Test
    void kcatProducesAndConsumesEveryCodec() throws Exception {
        ExternalClients.requireKcat();
        String bootstrap = PIER.bootstrapServers();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(ALL_CODECS.stream().map(c -> new NewTopic("kc-" + c, 1, (short) 1)).toList())
                    .all().get();
        }
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < RECORDS; i++) {
            input.append("k").append(i).append('\t').append(value(i)).append('\n');
        }
        for (String codec : ALL_CODECS) {
            String topic = "kc-" + codec;
            ExternalClients.Result produced = ExternalClients.run("kcat-produce-" + codec, List.of("kcat", "-P",
                    "-b", bootstrap, "-t", topic, "-p", "0", "-z", codec, "-K", "\t", "-H", "codec=" + codec,
                    "-X", "acks=all"), Map.of(), input.toString(), SCRIPT_TIMEOUT);
            assertThat(produced.exitCode()).as("kcat -P %s, see %s", codec, produced.log()).isZero();

            ExternalClients.Result consumed = ExternalClients.run("kcat-consume-" + codec, List.of("kcat", "-C",
                    "-b", bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
                    "-f", "%k\\t%s\\t%h\\n"), Map.of(), null, SCRIPT_TIMEOUT);
            assertThat(consumed.exitCode()).as("kcat -C %s, see %s", codec, consumed.log()).isZero();
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                expected.add("k" + i + "\t" + value(i) + "\tcodec=" + codec);
            }
            assertThat(consumed.stdout()).as("records read back by kcat, %s", codec).isEqualTo(expected);
            assertStored(topic, codec);
        }
        ExternalClients.Result listed = ExternalClients.run("kcat-list", List.of("kcat", "-L", "-b", bootstrap),
                Map.of(), null, SCRIPT_TIMEOUT);
        assertThat(String.join("\n", listed.stdout())).contains("topic \"kc-zstd\" with 1 partitions");
    }

    private static String value(int i) {
        return "value-" + i + "-" + "x".repeat(i % 50);
    }

    private static List<String> runPython(String name, String script, String prefix, List<String> codecs)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(ExternalClients.SYSTEM_PYTHON.toString(), script,
                PIER.bootstrapServers(), prefix, Integer.toString(RECORDS)));
        command.addAll(codecs);
        return ExternalClients.runScript(name, command, Map.of("PYTHONDONTWRITEBYTECODE", "1"), SCRIPT_TIMEOUT);
    }

    private static List<String> runNode(String name, String nodePath, String prefix, List<String> codecs)
            throws IOException {
        List<String> command = new ArrayList<>(List.of("node", "kafkajs_roundtrip.js", PIER.bootstrapServers(),
                prefix, Integer.toString(RECORDS)));
        command.addAll(codecs);
        return ExternalClients.runScript(name, command,
                Map.of("NODE_PATH", nodePath, "KAFKAJS_NO_PARTITIONER_WARNING", "1"), SCRIPT_TIMEOUT);
    }

    /** The script's own report of each step, then the batches as the broker stored them. */
    private void assertRoundTrips(List<String> out, String prefix, List<String> codecs) throws IOException {
        assertThat(out).as("admin create/list/delete").anySatisfy(line -> assertThat(line)
                .containsPattern(field("step", "\"admin\"")).containsPattern(field("deleted", "true")));
        for (String codec : codecs) {
            assertThat(out).as("round trip with %s", codec).anySatisfy(line -> assertThat(line)
                    .containsPattern(field("codec", "\"" + codec + "\""))
                    .containsPattern(field("produced", Integer.toString(RECORDS)))
                    .containsPattern(field("consumed", Integer.toString(RECORDS))));
            assertStored(prefix + "-" + codec, codec);
        }
    }

    private static Pattern field(String name, String value) {
        return Pattern.compile("\"" + name + "\":\\s*" + Pattern.quote(value));
    }

    /**
     * Reads partition 0 of {@code topic} and checks its batches are compressed with {@code codec}
     * (or not at all) and that kafka-clients can decompress it (Kafka refuses, for one, block-dependent LZ4
     * frames), with record i keyed k{@code i}.
     */
    private void assertStored(String topic, String codec) throws IOException {
        Set<CompressionType> seen = EnumSet.noneOf(CompressionType.class);
        long next = 0;
        long records = 0;
        try (RawKafkaClient raw = RawKafkaClient.connect(PIER.bootstrapServers())) {
            for (int round = 0; round < 100 && next < RECORDS; round++) {
                var request = MatrixRequests.fetch(FETCH_VERSION, topic, null);
                request.topics().get(0).partitions().get(0).setFetchOffset(next);
                RequestHeader header = new RequestHeader(ApiKeys.FETCH, FETCH_VERSION, "pier-it", ++correlationId);
                raw.sendFrame(RawKafkaClient.serialize(header, request, FETCH_VERSION));
                FetchResponse response = (FetchResponse) raw.receiveResponse(header);
                FetchResponseData.PartitionData p = response.data().responses().get(0).partitions().get(0);
                assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                for (RecordBatch batch : ((MemoryRecords) FetchResponse.recordsOrFail(p)).batches()) {
                    seen.add(batch.compressionType());
                    for (Record r : batch) {
                        assertThat(StandardCharsets.UTF_8.decode(r.key()).toString())
                                .as("key at offset %s of %s", r.offset(), topic).isEqualTo("k" + r.offset());
                        records++;
                    }
                    next = batch.nextOffset();
                }
            }
        }
        assertThat(next).as("offsets stored in %s", topic).isEqualTo(RECORDS);
        assertThat(records).as("records read back by kafka-clients from %s", topic).isEqualTo(RECORDS);
        Set<String> codecs = seen.stream().map(c -> c.name).collect(Collectors.toSet());
        // librdkafka sends a batch uncompressed when compressing does not make it smaller (a batch
        // of one or two records, when linger ends early on a busy machine); what must not happen is
        // a topic with no batch compressed at all.
        assertThat(codecs).as("compression of the batches stored in %s", topic).contains(codec)
                .isSubsetOf(codec, CompressionType.NONE.name);
    }
}
