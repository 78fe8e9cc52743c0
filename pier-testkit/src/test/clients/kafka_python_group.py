"""kafka-python consumer group against a broker: two members of one group subscribe to a
4-partition topic and share its partitions, consume every record once, commit synchronously, and
close; a third member of the group then gets all four partitions and finds nothing left to read.

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
    futures = [producer.send(topic, key=common.key(i).encode(), value=common.value(i).encode(),
                             partition=i % PARTITIONS) for i in range(count)]
    producer.flush(60)
    for f in futures:
        f.get(timeout=10)
    producer.close()

    # kafka-python rejoins a group only inside poll(), so each member polls on its own thread: a
    # JoinGroup waits for every member to rejoin, and one thread would wait on itself.
    seen = {}
    owners = [set(), set()]
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
                with lock:
                    for tp, records in got.items():
                        for r in records:
                            owners[n].add(tp.partition)
                            seen[r.key] = seen.get(r.key, 0) + 1
                    if len(seen) >= count:
                        done.set()
                if got:
                    m.commit()
            if n == 0:
                # Stays a member until both have committed: the sum covers every partition.
                time.sleep(1)
                committed[0] = sum(m.committed(TopicPartition(topic, p)) or 0 for p in range(PARTITIONS))
        except Exception as e:  # reported by the main thread
            errors.append(e)
            done.set()
        finally:
            m.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    committed = committed[0]

    late = member(bootstrap, group)
    late.subscribe([topic])
    leftover = 0
    end = time.time() + 8
    while time.time() < end:
        leftover += sum(len(rs) for rs in late.poll(timeout_ms=500, max_records=100).values())
    # Its assignment shows that it did join and fetch from the committed offsets, so the 0 means something.
    late_assigned = len(late.assignment())
    late.close()
    common.report(CLIENT, step="group", consumed=len(seen), duplicates=sum(c - 1 for c in seen.values()),
                  committed=committed, both_members_read=all(owners), leftover=leftover,
                  late_assigned=late_assigned)


if __name__ == "__main__":
    main()
