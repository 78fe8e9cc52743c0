#!/usr/bin/env bash
# JMH micro-benchmarks of the share-partition engine alone (io.pier.bench.jmh.SharePartitionBench).
#   bench/engine-jmh.sh                 defaults below
#   bench/engine-jmh.sh -f 2 -i 10      any JMH option (java -jar jmh ... -h lists them)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
./mvnw -q -B -ntp -o -Pbench -DskipTests package -pl pier-bench -am 2>/dev/null \
  || ./mvnw -q -B -ntp -Pbench -DskipTests package -pl pier-bench -am
BENCH_JAR=$(ls -t "$ROOT"/pier-bench/target/pier-bench-*.jar | head -1)
ARGS=("$@")
[[ ${#ARGS[@]} -eq 0 ]] && ARGS=(-f 1 -wi 3 -w 1s -i 5 -r 1s -jvmArgs "-Xms1g -Xmx1g")
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -cp "$BENCH_JAR:$ROOT/pier-bench/target/lib/*" \
  org.openjdk.jmh.Main 'io.pier.bench.jmh.SharePartitionBench' "${ARGS[@]}"
