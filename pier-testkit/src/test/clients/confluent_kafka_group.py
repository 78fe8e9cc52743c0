"""confluent-kafka (librdkafka) consumer group against a broker: two members of one group
subscribe to a 4-partition topic and share its partitions, consume every record once, commit
synchronously, and close; a third member of the group then gets all four partitions and reads from
the committed offsets: the first records it gets are one marker per partition, produced after it
joined.

Usage: confluent_kafka_group.py BOOTSTRAP TOPIC COUNT
Prints one JSON line; exits non-zero on the first failure.
"""
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import roundtrip_common as common

CLIENT = "confluent-kafka %s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])
PARTITIONS = 4


def member(bootstrap, group):
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", "session.timeout.ms": 10000})


def main():
    bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    group = topic + "-group"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, PARTITIONS, 1)], operation_timeout=10).values():
        f.result(30)
    members = [member(bootstrap, group), member(bootstrap, group)]
    for m in members:
        m.subscribe([topic])
    # The records come once both members share the partitions, so each has some to read.
    deadline = time.time() + 60
    while not all(len(m.assignment()) == PARTITIONS // 2 for m in members) and time.time() < deadline:
        for m in members:
            for msg in m.consume(num_messages=100, timeout=0.1):
                if msg.error():
                    raise AssertionError("consume error %s" % msg.error())
                raise AssertionError("a record before any was produced: %r" % msg.key())
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(count):
        producer.produce(topic, key=common.key(i), value=common.value(i), partition=i % PARTITIONS)
    if producer.flush(60):
        raise AssertionError("records left undelivered")

    seen = {}
    owners = [set(), set()]
    deadline = time.time() + 90
    while len(seen) < count and time.time() < deadline:
        for n, m in enumerate(members):
            msgs = m.consume(num_messages=100, timeout=0.2)
            for msg in msgs:
                if msg.error():
                    raise AssertionError("consume error %s" % msg.error())
                owners[n].add(msg.partition())
                seen[msg.key()] = seen.get(msg.key(), 0) + 1
            if msgs:
                m.commit(asynchronous=False)
    committed = sum(tp.offset for tp in members[0].committed(
        [TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10) if tp.offset >= 0)
    for m in members:
        m.close()

    # The late member gets every partition; once it has, one marker record goes to each. It reads
    # from the committed offsets, so the markers are all it may get: any other record read before
    # them (or instead of them) is leftover. Getting all four markers shows that it did fetch every
    # partition, so a leftover of 0 means something.
    late = member(bootstrap, group)
    late.subscribe([topic])
    leftover = 0
    markers = set()

    def late_consume():
        nonlocal leftover
        for msg in late.consume(num_messages=100, timeout=0.1):
            if msg.error():
                continue
            if msg.key() == b"marker":
                markers.add(msg.partition())
            else:
                leftover += 1

    deadline = time.time() + 60
    while len(late.assignment()) < PARTITIONS and time.time() < deadline:
        late_consume()
    late_assigned = len(late.assignment())
    for p in range(PARTITIONS):
        producer.produce(topic, key=b"marker", value=b"marker", partition=p)
    if producer.flush(60):
        raise AssertionError("markers left undelivered")
    deadline = time.time() + 60
    while len(markers) < PARTITIONS and time.time() < deadline:
        late_consume()
    if len(markers) < PARTITIONS:
        raise AssertionError("late member read the marker of only %d partitions" % len(markers))
    late.close()
    common.report(CLIENT, step="group", consumed=len(seen), duplicates=sum(c - 1 for c in seen.values()),
                  committed=committed, both_members_read=all(owners), leftover=leftover,
                  late_assigned=late_assigned)


if __name__ == "__main__":
    main()
