"""Shared by the Python client scripts: the records every client sends and how they are checked.

Record i of a codec's topic has key "k<i>", value "value-<i>-" followed by i % 50 x's, and the
headers idx=<i> and codec=<codec>, so a consumer can check every field of every record.
"""
import json
import sys
import time


def key(i):
    return "k%d" % i


def value(i):
    return "value-%d-%s" % (i, "x" * (i % 50))


def headers(i, codec):
    return [("idx", str(i).encode()), ("codec", codec.encode())]


def check(records, count, codec):
    """records: (key bytes, value bytes, [(name, value bytes)]) in offset order. Raises on a mismatch."""
    if len(records) != count:
        raise AssertionError("%s: consumed %d records, expected %d" % (codec, len(records), count))
    for i, (k, v, h) in enumerate(records):
        if k != key(i).encode() or v != value(i).encode():
            raise AssertionError("%s: record %d is %r=%r" % (codec, i, k, v))
        got = [(n, bytes(x)) for n, x in (h or [])]
        if got != headers(i, codec):
            raise AssertionError("%s: record %d headers %r" % (codec, i, got))


def report(client, **fields):
    fields["client"] = client
    print(json.dumps(fields, sort_keys=True), flush=True)


def wait_until(what, condition, timeout_s=30):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def args():
    if len(sys.argv) < 5:
        sys.exit("usage: %s BOOTSTRAP TOPIC_PREFIX COUNT CODEC..." % sys.argv[0])
    return sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]


def roundtrip_each_codec(client, admin, prefix, count, codecs, create, produce, consume, bootstrap):
    """For each codec: a fresh topic, count records produced, read back from the beginning, checked."""
    for codec in codecs:
        topic = "%s-%s" % (prefix, codec)
        create(admin, topic)
        produce(bootstrap, topic, count, codec)
        records, watermarks = consume(bootstrap, topic, count)
        check(records, count, codec)
        if watermarks != (0, count):
            raise AssertionError("%s: watermarks %s" % (codec, watermarks))
        report(client, step="roundtrip", codec=codec, topic=topic, produced=count, consumed=len(records),
               watermarks=list(watermarks))
