"""kafka-python against a broker: admin create/list/delete, then per codec produce COUNT records
with keys, values and headers, and read them back with assign.

Usage: kafka_python_roundtrip.py BOOTSTRAP TOPIC_PREFIX COUNT CODEC...
Prints one JSON line per step; exits non-zero on the first failure. Leaves each codec's topic
(TOPIC_PREFIX-CODEC) in place so the caller can inspect how its batches were stored.
"""
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

import roundtrip_common as common

CLIENT = "kafka-python %s" % kafka.__version__


def create(admin, topic):
    admin.create_topics([NewTopic(topic, 1, 1)], timeout_ms=10000)
    common.wait_until("%s listed" % topic, lambda: topic in admin.list_topics())


def admin_round(admin, prefix):
    topic = prefix + "-admin"
    create(admin, topic)
    admin.delete_topics([topic], timeout_ms=10000)
    common.wait_until("%s gone" % topic, lambda: topic not in admin.list_topics())
    common.report(CLIENT, step="admin", created=topic, listed=True, deleted=True)


def produce(bootstrap, topic, count, codec):
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=100,
                             compression_type=None if codec == "none" else codec)
    try:
        futures = [producer.send(topic, key=common.key(i).encode(), value=common.value(i).encode(),
                                 headers=common.headers(i, codec), partition=0) for i in range(count)]
        producer.flush(60)
        for f in futures:
            f.get(timeout=10)
    finally:
        producer.close(10)


def consume(bootstrap, topic, count):
    # No group: assign() reads the partition directly, from its beginning.
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        watermarks = (consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp])
        records = []
        deadline = time.time() + 60
        while len(records) < count and time.time() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend((r.key, r.value, r.headers) for r in batch)
        return records, watermarks
    finally:
        consumer.close()


def main():
    bootstrap, prefix, count, codecs = common.args()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        admin_round(admin, prefix)
        common.roundtrip_each_codec(CLIENT, admin, prefix, count, codecs, create, produce, consume, bootstrap)
    finally:
        admin.close()


if __name__ == "__main__":
    main()
