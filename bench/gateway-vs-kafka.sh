#!/usr/bin/env bash
# Pier gateway nodes (issue 16) vs Apache Kafka 4.4's native share groups, on one Kafka broker on this
# machine (see docs/scale-out.md and the "Gateway (issue 16)" section of docs/benchmarks.md).
#   bench/gateway-vs-kafka.sh            full run: 3 rounds of 1,000,000 records per row, 4 and 16 consumers,
#                                        then 5 kills per session timeout (10000 and 3000 ms)
#   bench/gateway-vs-kafka.sh --quick    1 round of 100,000 records, 16 consumers, 2 kills per timeout (a few minutes)
# One Kafka broker (share groups on) serves every row: (a) its own share group, (b) 1 Pier gateway node over it,
# (c) 3 gateway nodes over it (node ids 1-3, their own ports; consumers bootstrap on all three). Each row reads a
# topic of its own, produced to Kafka directly, with K share consumers accepting every record; records/s from
# the first record, and CPU per record of the Kafka broker and of the gateway nodes, separately and summed.
# Then the failover: 3 gateway nodes, a steady producer, share consumers; one node at a time is killed with
# kill -9; the time until the first record of a partition it led is delivered again (min / median / max).
# Options:
#   --rounds N               rounds of the throughput rows (the row order rotates every round)
#   --records N              records per throughput run (default 1,000,000; quick 100,000)
#   --warm-records N         records of the unmeasured warm-up read of Kafka and of each gateway deployment
#   --partitions N           partitions of every topic (default 12)
#   --consumers LIST         consumer counts of the throughput rows, e.g. 4,16 (each a row)
#   --rows LIST              subset of kafka,gw1,gw3
#   --session-timeouts LIST  pier.gateway.session.timeout.ms values of the failover runs (default 10000,3000);
#                            below 6000 the Kafka broker gets group.min.session.timeout.ms lowered to match
#   --kills N                kills per session timeout (default 5; quick 2)
#   --failover-rate N        records/s produced during the failover runs (default 2,000; quick 1,000)
#   --failover-consumers N   share consumers of the failover runs (default 4)
#   --no-failover            throughput rows only
#   --only-failover          failover runs only
#   --heap 1g, --out FILE (default: pier-bench/target/bench-run-gateway/gateway-vs-kafka[-quick].md), --help
# PIER_BENCH_PIER_JVM_OPTS and PIER_BENCH_PIER_SET act on the gateway nodes as in bench/pier-vs-kafka.sh.
# Builds Pier with -Pbench and fetches the Kafka broker jars from Maven Central (once) into
# ${PIER_BENCH_CACHE:-~/.cache/pier-bench}. Client JVM options: BENCH_JAVA_OPTS (default -Xmx1g).
set -euo pipefail
if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'
  exit 0
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KAFKA_VERSION=4.4.0
CACHE="${PIER_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pier-bench}"
KAFKA_LIB="$CACHE/kafka-$KAFKA_VERSION/lib"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

mvn_quiet() { ./mvnw -q -B -ntp -o "$@" 2>/dev/null || ./mvnw -q -B -ntp "$@"; }

echo "[gateway-vs-kafka] building pier-server and pier-bench" >&2
mvn_quiet -Pbench -DskipTests package -pl pier-server,pier-bench -am
if [[ ! -f "$KAFKA_LIB/kafka_2.13-$KAFKA_VERSION.jar" ]]; then
  echo "[gateway-vs-kafka] fetching Apache Kafka $KAFKA_VERSION into $KAFKA_LIB" >&2
  mkdir -p "$KAFKA_LIB"
  mvn_quiet -f pier-bench/kafka-ref/pom.xml -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DoutputDirectory="$KAFKA_LIB"
fi

COMMAND="bench/gateway-vs-kafka.sh${*:+ $*}"
PIER_JAR=$(ls -t "$ROOT"/pier-server/target/pier-server-*.jar | grep -v -e sources -e javadoc | head -1)
BENCH_JAR=$(ls -t "$ROOT"/pier-bench/target/pier-bench-*.jar | head -1)
# shellcheck disable=SC2086
exec "$JAVA" ${BENCH_JAVA_OPTS:--Xmx1g} -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
  -cp "$BENCH_JAR:$ROOT/pier-bench/target/lib/*" io.pier.bench.harness.GatewayBench \
  --pier-cp "$PIER_JAR:$ROOT/pier-server/target/lib/*" --kafka-lib "$KAFKA_LIB" \
  --work "$ROOT/pier-bench/target/bench-run-gateway" --command "$COMMAND" "$@"
