"""confluent-kafka (librdkafka) against a broker: admin create/list/delete, then per codec
produce COUNT records with keys, values and headers, and read them back with assign.

Usage: confluent_kafka_roundtrip.py BOOTSTRAP TOPIC_PREFIX COUNT CODEC...
Prints one JSON line per step; exits non-zero on the first failure. Leaves each codec's topic
(TOPIC_PREFIX-CODEC) in place so the caller can inspect how its batches were stored.
"""
import time

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

import roundtrip_common as common

CLIENT = "confluent-kafka %s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])


def create(admin, topic):
    for f in admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=10).values():
        f.result(30)
    common.wait_until("%s listed" % topic, lambda: topic in admin.list_topics(timeout=10).topics)


def admin_round(admin, prefix):
    topic = prefix + "-admin"
    create(admin, topic)
    for f in admin.delete_topics([topic], operation_timeout=10).values():
        f.result(30)
    common.wait_until("%s gone" % topic, lambda: topic not in admin.list_topics(timeout=10).topics)
    common.report(CLIENT, step="admin", created=topic, listed=True, deleted=True)


def produce(bootstrap, topic, count, codec):
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 100,
                         "acks": "all"})
    failures = []

    def on_delivery(err, msg):
        if err is not None:
            failures.append(str(err))

    for i in range(count):
        producer.produce(topic, key=common.key(i), value=common.value(i), headers=common.headers(i, codec),
                         partition=0, on_delivery=on_delivery)
        producer.poll(0)
    remaining = producer.flush(60)
    if remaining or failures:
        raise AssertionError("%s: %d undelivered, failures %s" % (codec, remaining, failures[:3]))


def consume(bootstrap, topic, count):
    # No group is joined: assign() reads the partition directly, starting at its beginning.
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic + "-unused",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        records = []
        deadline = time.time() + 60
        while len(records) < count and time.time() < deadline:
            for msg in consumer.consume(num_messages=500, timeout=0.5):
                if msg.error():
                    raise AssertionError("consume error %s" % msg.error())
                records.append((msg.key(), msg.value(), msg.headers()))
        return records, (low, high)
    finally:
        consumer.close()


def main():
    bootstrap, prefix, count, codecs = common.args()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin_round(admin, prefix)
    common.roundtrip_each_codec(CLIENT, admin, prefix, count, codecs, create, produce, consume, bootstrap)


if __name__ == "__main__":
    main()
