package io.pier.examples.orders;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ShareKafkaListenerContainerFactory;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.DefaultShareConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ShareConsumerFactory;

/**
 * The share-consumer side, which Spring Boot 4.0 does not configure by itself: a share consumer
 * factory in explicit acknowledgement mode, the listener container factory that
 * {@link OrderListener} names, the two topics, and the share group's own configs.
 */
@Configuration(proxyBeanMethods = false)
public class ShareListenerConfig {
    /** The bean name {@link OrderListener}'s {@code @KafkaListener} refers to. */
    public static final String CONTAINER_FACTORY = "orderShareListenerFactory";

    @Bean
    public ShareConsumerFactory<String, String> orderShareConsumerFactory(KafkaProperties kafka) {
        Map<String, Object> props = new HashMap<>(kafka.getProperties());
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBootstrapServers());
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        // The Kafka client's own switch: without it KafkaShareConsumer.acknowledge(record, type)
        // throws, and every record of a poll is accepted when the next poll starts.
        props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        return new DefaultShareConsumerFactory<>(props);
    }

    @Bean(CONTAINER_FACTORY)
    public ShareKafkaListenerContainerFactory<String, String> orderShareListenerFactory(
            ShareConsumerFactory<String, String> orderShareConsumerFactory) {
        ShareKafkaListenerContainerFactory<String, String> factory =
                new ShareKafkaListenerContainerFactory<>(orderShareConsumerFactory);
        // Spring's side of the same switch: hand each record to the listener with a
        // ShareAcknowledgment that it must call exactly once before the next poll.
        factory.getContainerProperties().setExplicitShareAcknowledgment(true);
        return factory;
    }

    /** Created by Spring's KafkaAdmin at start-up when missing. */
    @Bean
    public NewTopic ordersTopic(OrdersProperties orders) {
        return TopicBuilder.name(orders.topic()).partitions(1).replicas(1).build();
    }

    /** Only a topic that opts in may be a share group's dead-letter topic (KIP-1191). */
    @Bean
    public NewTopic ordersDeadLetterTopic(OrdersProperties orders) {
        return TopicBuilder.name(orders.deadLetterTopic()).partitions(1).replicas(1)
                .config("errors.deadletterqueue.group.enable", "true")
                .build();
    }

    /**
     * Sets the share group's configs once the beans exist, which is before any listener container
     * starts: read from the earliest offset (a new share group starts at the end of the topic by
     * default, and would skip orders written before it first fetched), and write every rejected
     * order, key and value included, to the dead-letter topic.
     */
    @Bean
    public SmartInitializingSingleton orderGroupConfigs(KafkaAdmin kafkaAdmin, OrdersProperties orders) {
        return () -> {
            ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, orders.group());
            List<AlterConfigOp> ops = List.of(
                    set("share.auto.offset.reset", "earliest"),
                    set("errors.deadletterqueue.topic.name", orders.deadLetterTopic()),
                    set("errors.deadletterqueue.copy.record.enable", "true"));
            try (Admin admin = Admin.create(kafkaAdmin.getConfigurationProperties())) {
                admin.incrementalAlterConfigs(Map.of(group, ops)).all()
                        .get(kafkaAdmin.getOperationTimeout(), TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException("cannot set the configs of share group " + orders.group(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted setting the configs of share group " + orders.group(), e);
            }
        };
    }

    private static AlterConfigOp set(String key, String value) {
        return new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
    }
}
