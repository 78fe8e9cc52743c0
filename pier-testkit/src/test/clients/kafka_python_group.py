"""kafka-python consumer group against a broker: two members of one group subscribe to a
4-partition topic and share its partitions, consume every record once, commit synchronously, and
close; a third member of the group then gets all four partitions and reads from the committed
offsets: the first records it gets are one marker per partition, produced after it joined.

Usage: kafka_python_group.py BOOTSTRAP TOPIC COUNT
Prints one JSON line; exits non-zero on the first failure.
"""
import sys
import threading
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

import roundtrip_common as common

CLIENT = "kafka-python %s" % kafka.__version__
PARTITIONS = 4


def member(bootstrap, group):
    return KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                         auto_offset_reset="earliest", session_timeout_ms=10000, heartbeat_interval_ms=500)


def main():
    bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    group = topic + "-group"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)], timeout_ms=10000)
    common.wait_until("%s listed" % topic, lambda: topic in admin.list_topics())
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")

    # kafka-python rejoins a group only inside poll(), so each member polls on its own thread: a
    # JoinGroup waits for every member to rejoin, and one thread would wait on itself.
    seen = {}
    owners = [set(), set()]
    assigned = [0, 0]
    read_records = [0]
    committed_records = [0]
    committed = [0]
    lock = threading.Lock()
    done = threading.Event()
    errors = []

    def run(n):
        m = member(bootstrap, group)
        try:
            m.subscribe([topic])
            deadline = time.time() + 90
            while not done.is_set() and time.time() < deadline:
                got = m.poll(timeout_ms=200, max_records=100)
                assigned[n] = len(m.assignment())
                with lock:
                    for tp, records in got.items():
                        for r in records:
                            owners[n].add(tp.partition)
                            seen[r.key] = seen.get(r.key, 0) + 1
                            read_records[0] += 1
                    if len(seen) >= count:
                        done.set()
                if got:
                    m.commit()
                    with lock:
                        committed_records[0] += sum(len(rs) for rs in got.values())
            if n == 0:
                # Stays a member until both have committed every record they read: the sum covers
                # every partition.
                common.wait_until("both members' commits", lambda: committed_records[0] >= read_records[0] or errors)
                committed[0] = sum(m.committed(TopicPartition(topic, p)) or 0 for p in range(PARTITIONS))
        except Exception as e:  # reported by the main thread
            errors.append(e)
            done.set()
        finally:
            m.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    # The records come once both members share the partitions, so each has some to read.
    deadline = time.time() + 60
    while assigned != [PARTITIONS // 2] * 2 and not errors and time.time() < deadline:
        time.sleep(0.05)
    futures = [producer.send(topic, key=common.key(i).encode(), value=common.value(i).encode(),
                             partition=i % PARTITIONS) for i in range(count)]
    producer.flush(60)
    for f in futures:
        f.get(timeout=10)
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    committed = committed[0]

    # The late member gets every partition; once it has, one marker record goes to each. It reads
    # from the committed offsets, so the markers are all it may get: any other record read before
    # them (or instead of them) is leftover. Getting all four markers shows that it did fetch every
    # partition, so a leftover of 0 means something.
    late = member(bootstrap, group)
    late.subscribe([topic])
    leftover = 0
    markers = set()

    def late_poll():
        nonlocal leftover
        for tp, records in late.poll(timeout_ms=100, max_records=100).items():
            for r in records:
                if r.key == b"marker":
                    markers.add(tp.partition)
                else:
                    leftover += 1

    deadline = time.time() + 60
    while len(late.assignment()) < PARTITIONS and time.time() < deadline:
        late_poll()
    late_assigned = len(late.assignment())
    for f in [producer.send(topic, key=b"marker", value=b"marker", partition=p) for p in range(PARTITIONS)]:
        f.get(timeout=30)
    deadline = time.time() + 60
    while len(markers) < PARTITIONS and time.time() < deadline:
        late_poll()
    if len(markers) < PARTITIONS:
        raise AssertionError("late member read the marker of only %d partitions" % len(markers))
    producer.close()
    late.close()
    common.report(CLIENT, step="group", consumed=len(seen), duplicates=sum(c - 1 for c in seen.values()),
                  committed=committed, both_members_read=all(owners), leftover=leftover,
                  late_assigned=late_assigned)


if __name__ == "__main__":
    main()
