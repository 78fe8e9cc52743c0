package io.pier.it.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pier.testkit.PierExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Kafka Streams word count (kafka-streams 4.4, unchanged) against Pier: a repartition topic,
 * a compacted changelog topic and a consumer group under the hood, and with {@code exactly_once_v2}
 * a transactional producer that sends its input offsets to each transaction. Its output, read
 * with read_committed, holds exactly the counts of the input.
 */
@Timeout(180)
class StreamsWordCountIT {
    @RegisterExtension
    static final PierExtension PIER = PierExtension.withConfig("group.initial.rebalance.delay.ms", "0");

    @TempDir
    Path stateDir;

    @ParameterizedTest
    @ValueSource(strings = {StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2})
    void shouldCountEveryWordOfTheInputExactly(String guarantee) throws Exception {
        // Given an input topic of lines with known word counts
        String suffix = guarantee.replace('_', '-');
        String input = "lines-" + suffix;
        String output = "counts-" + suffix;
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", PIER.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(input, 2, (short) 1), new NewTopic(output, 2, (short) 1)))
                    .all().get();
        }
        String[] words = {"queue", "log", "share", "group", "record"};
        Map<String, Long> expected = new HashMap<>();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> p = new KafkaProducer<>(
                Map.of("bootstrap.servers", PIER.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
            for (int line = 0; line < 200; line++) {
                List<String> lineWords = new ArrayList<>();
                for (int w = 0; w <= line % words.length; w++) {
                    String word = words[(line + w) % words.length];
                    lineWords.add(word.toUpperCase(Locale.ROOT));
                    expected.merge(word, 1L, Long::sum);
                }
                sent.add(p.send(new ProducerRecord<>(input, "line-" + line, String.join(" ", lineWords))));
            }
        }
        for (Future<RecordMetadata> f : sent) {
            assertThat(f.get().hasOffset()).isTrue();
        }

        // When a word-count application processes it
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(input)
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split(" ")))
                .groupBy((key, word) -> word)
                .count(Materialized.as(Stores.inMemoryKeyValueStore("word-counts")))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "word-count-" + suffix);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, PIER.bootstrapServers());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createDirectories(stateDir.resolve(suffix)).toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        Map<String, Long> latest = new HashMap<>();
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props);
                KafkaConsumer<String, Long> out = new KafkaConsumer<>(Map.of(
                        "bootstrap.servers", PIER.bootstrapServers(),
                        "group.id", "counts-reader-" + suffix,
                        "auto.offset.reset", "earliest",
                        "isolation.level", "read_committed"), new StringDeserializer(), new LongDeserializer())) {
            streams.start();
            out.subscribe(List.of(output));

            // Then the latest count of every word in the output is its count in the input
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, Long> r : out.poll(Duration.ofMillis(200))) {
                    latest.put(r.key(), r.value());
                }
                return latest.equals(expected);
            });
            assertThat(streams.state()).isEqualTo(KafkaStreams.State.RUNNING);
        }
        assertThat(latest).isEqualTo(expected);
    }
}
