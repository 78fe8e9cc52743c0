#!/usr/bin/env bash
# Pier vs Apache Kafka 4.4, side by side on this machine (see docs/benchmarks.md).
#   bench/pier-vs-kafka.sh            full run (3 rounds, 4 brokers), writes docs/benchmarks.md
#   bench/pier-vs-kafka.sh --quick    1 round, small counts, writes pier-bench/target/bench-run/benchmarks-quick.md
# Options:
#   --rounds N            rounds (brokers alternate; the order rotates every round)
#   --only KEY-SUBSTRING  only the rows whose key contains it, e.g. share-implicit-16c-1p, produce-100,
#                         share-re (share-redeliver, share-redeliver-backoff with Pier's release backoff,
#                         share-reject-dlq: REJECT into a KIP-1191 dead-letter topic, letters counted),
#                         kcat, lat-5000, linger0, group (every consumer-group row), group-classic-4c-10p,
#                         group-consumer, txn (the transaction rows: txn-produce-100, txn-produce-1000,
#                         txn-share-read-committed, txn-share-read-uncommitted; keys are in the "Every round" table),
#                         tls (produce-tls, share-tls), sasl (produce-sasl-ssl, share-sasl-ssl), security (all four):
#                         these also run their PLAINTEXT baselines (produce-plaintext, share-plaintext) on the same
#                         broker in the same round, give every broker SSL and SASL_SSL (PLAIN) listeners with a
#                         self-signed certificate made in the work folder, and add a "TLS and SASL_SSL cost" section
#   --brokers LIST        comma-separated subset of pier-durable,pier-none,kafka,kafka-fsync
#                         (kafka: defaults, no fsync; kafka-fsync: log.flush.interval.messages=1),
#                         and pier-baseline with --baseline
#   --baseline REV        also build Pier durable at git revision REV (a clean copy of that commit under
#                         pier-bench/target) as broker pier-baseline, to measure a change before and after
#                         in one run: e.g. --baseline HEAD~3 --brokers pier-durable,pier-baseline,kafka
#   --records N           records per share run (and in the share source topics; default 1,000,000)
#   --group-records N     records in the consumer-group rows' own 10-partition topic (default 3,000,000)
#   --security-records N  records per produce and per share run of the tls/sasl rows (default: the produce
#                         row's count, 200,000, and --records)
#   --no-warmup           skip the unmeasured warm-up pass of the client JVM before round 1
#   --no-broker-warmup    skip each broker's unmeasured warm-up pass (every selected workload once, 500,000 records per share and consumer-group run) before
#                         its measured one; without it each row also pays for the broker's JIT compilation
#   --jfr                 record the Pier JVMs of the last round with JFR, add the hottest frames to the page
#   --no-jmh, --heap 1g, --out FILE, --help
# PIER_BENCH_PIER_JVM_OPTS adds JVM options to the Pier brokers only (e.g. a profiler agent).
# PIER_BENCH_PIER_SET adds broker settings to the Pier brokers only, as "k=v k=v" (e.g. pier.agent.spin.us=50).
# The librdkafka rows need kcat on the PATH (Debian: apt-get install kcat); without it they are skipped.
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

echo "[pier-vs-kafka] building pier-server and pier-bench" >&2
mvn_quiet -Pbench -DskipTests package -pl pier-server,pier-bench -am
if [[ ! -f "$KAFKA_LIB/kafka_2.13-$KAFKA_VERSION.jar" ]]; then
  echo "[pier-vs-kafka] fetching Apache Kafka $KAFKA_VERSION into $KAFKA_LIB" >&2
  mkdir -p "$KAFKA_LIB"
  mvn_quiet -f pier-bench/kafka-ref/pom.xml -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DoutputDirectory="$KAFKA_LIB"
fi

if ! command -v kcat >/dev/null 2>&1 && ! command -v kafkacat >/dev/null 2>&1; then
  echo "[pier-vs-kafka] kcat not found: the librdkafka rows will be skipped (Debian: apt-get install kcat)" >&2
fi

# --baseline REV: Pier at another commit, built from a clean copy of it (git archive), as pier-baseline.
COMMAND="bench/pier-vs-kafka.sh${*:+ $*}"
BASELINE_ARGS=()
ARGS=()
while [[ $# -gt 0 ]]; do
  if [[ "$1" == "--baseline" ]]; then
    [[ $# -ge 2 ]] || { echo "[pier-vs-kafka] --baseline needs a git revision" >&2; exit 2; }
    REV=$(git rev-parse --verify --short "$2^{commit}") || { echo "[pier-vs-kafka] no such revision: $2" >&2; exit 2; }
    BASE_DIR="$ROOT/pier-bench/target/baseline-$REV"
    if [[ ! -f "$BASE_DIR/.built" ]]; then
      echo "[pier-vs-kafka] building the baseline, Pier at $REV, in $BASE_DIR" >&2
      rm -rf "$BASE_DIR" && mkdir -p "$BASE_DIR"
      git archive "$REV" | tar -x -C "$BASE_DIR"
      (cd "$BASE_DIR" && chmod +x mvnw && mvn_quiet -Pbench -DskipTests package -pl pier-server -am)
      touch "$BASE_DIR/.built"
    fi
    BASE_JAR=$(ls -t "$BASE_DIR"/pier-server/target/pier-server-*.jar | grep -v -e sources -e javadoc | head -1)
    BASELINE_ARGS=(--baseline-cp "$BASE_JAR:$BASE_DIR/pier-server/target/lib/*")
    shift 2
  else
    ARGS+=("$1")
    shift
  fi
done

PIER_JAR=$(ls -t "$ROOT"/pier-server/target/pier-server-*.jar | grep -v -e sources -e javadoc | head -1)
BENCH_JAR=$(ls -t "$ROOT"/pier-bench/target/pier-bench-*.jar | head -1)
# shellcheck disable=SC2086
exec "$JAVA" ${BENCH_JAVA_OPTS:--Xmx1g} -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
  -cp "$BENCH_JAR:$ROOT/pier-bench/target/lib/*" io.pier.bench.harness.SideBySide \
  --pier-cp "$PIER_JAR:$ROOT/pier-server/target/lib/*" --kafka-lib "$KAFKA_LIB" \
  --work "$ROOT/pier-bench/target/bench-run" --command "$COMMAND" \
  ${BASELINE_ARGS[@]+"${BASELINE_ARGS[@]}"} ${ARGS[@]+"${ARGS[@]}"}
