#!/usr/bin/env bash
# Backlog soak (reliability scenario S43; docs/reliability.md, "Backlog soak (S43)"). Starts
# `./pier start` on a free port with a fresh data folder, then runs io.pier.bench.BacklogSoak
# (pier-testkit's test sources) against it:
#   1. idempotent acks=all producers, one per partition, write a backlog of 4 KiB records, each
#      value carrying its sequence number; what was acknowledged is noted per partition;
#   2. ONE slow share consumer (explicit acknowledgement) runs for the minutes given: it holds each
#      poll's records ACQUIRED for a fixed time, then ACCEPTs them all (commitSync); the time is
#      chosen so that it gets through about a third of the backlog. The group's in-flight cap
#      (share.partition.max.record.locks) is set to 500 and each poll asks for 500 x partitions;
#   3. every 10 s it prints the broker's resident memory, its live heap after a full GC (jcmd),
#      pier_share_lag summed over the partitions against high watermark - share start offset from
#      Admin (equal with the consumer held between polls; the largest difference while it runs),
#      and the records the consumer holds ACQUIRED against cap x partitions;
#   4. at the end it checks that every delivered record was acknowledged to its producer at that
#      offset, byte for byte; that no record came again after its ACCEPT was confirmed (I5); that
#      every delivery count is 1; I1 (each acknowledged record ACCEPTed or still in the log past the
#      start offset, read back); and whether the heap grew. Exit status 1 if any check failed.
#   bench/backlog-soak.sh [backlog GiB (10)] [minutes of consuming (60)] [partitions (4)]
# Refuses to start unless the data folder's file system has the backlog plus a quarter and 5 GiB
# free. PIER_BENCH_PIER_SET="k=v k=v" gives the broker settings. Needs python3 and the JDK's jcmd
# on the PATH. Loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BACKLOG_GIB="${1:-10}"
MINUTES="${2:-60}"
PARTITIONS="${3:-4}"
SNAPSHOT_MS=1000
[[ "$BACKLOG_GIB" =~ ^[1-9][0-9]*$ && "$MINUTES" =~ ^[1-9][0-9]*$ && "$PARTITIONS" =~ ^[1-9][0-9]*$ ]] \
  || { echo "usage: bench/backlog-soak.sh [backlog GiB (10)] [minutes (60)] [partitions (4)], whole numbers > 0" >&2; exit 2; }
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The backlog on disk is the records plus their batch headers and indexes (a few per cent): ask for
# a quarter more, and 5 GiB for everything else on the file system.
NEED_KIB=$(( BACKLOG_GIB * 1024 * 1024 * 5 / 4 + 5 * 1024 * 1024 ))
FREE_KIB="$(df -Pk "$WORK" | awk 'NR == 2 {print $4}')"
if (( FREE_KIB < NEED_KIB )); then
  echo "backlog-soak: a ${BACKLOG_GIB} GiB backlog needs $(( NEED_KIB / 1048576 )) GiB free where the data goes" \
    "($(df -P "$WORK" | awk 'NR == 2 {print $6}'), TMPDIR); $(( FREE_KIB / 1048576 )) GiB is free: not starting" >&2
  exit 1
fi

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
METRICS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

# The load's classes and classpath, built before the broker starts so no build runs beside it.
(cd "$ROOT" && ./mvnw -q -B -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test)
LOAD_CP="$ROOT/pier-testkit/target/test-classes:$ROOT/pier-testkit/target/classes:$(cat "$ROOT/pier-testkit/target/bench.classpath")"

data="$WORK/data"
settings=()
for kv in ${PIER_BENCH_PIER_SET:-}; do settings+=(--set "$kv"); done
"$ROOT/pier" start --port "$PORT" --data-dir "$data" --set "pier.metrics.port=$METRICS_PORT" \
  --set "pier.metrics.snapshot.interval.ms=$SNAPSHOT_MS" ${settings[@]+"${settings[@]}"} >"$WORK/broker.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 300); do
  grep -q "Pier is ready" "$WORK/broker.log" 2>/dev/null && break
  sleep 0.2
done
grep -q "Pier is ready" "$WORK/broker.log" || { cat "$WORK/broker.log"; echo "pier did not start" >&2; exit 1; }
BROKER="$(pgrep -f -- "--data-dir $data" | head -1)"
PIDS+=("$BROKER")
echo "[backlog-soak] $(date -u +%FT%TZ): ${BACKLOG_GIB} GiB backlog, ${MINUTES} min, ${PARTITIONS} partitions;" \
  "broker pid $BROKER on 127.0.0.1:$PORT, data in $data ($(( FREE_KIB / 1048576 )) GiB free)"

status=0
java -cp "$LOAD_CP" io.pier.bench.BacklogSoak "127.0.0.1:$PORT" "$METRICS_PORT" "$BROKER" \
  "$(( BACKLOG_GIB * 1024 ))" "$MINUTES" "$PARTITIONS" "$SNAPSHOT_MS" || status=$?
echo "[backlog-soak] data folder at the end: $(du -sh "$data" | cut -f1)"
grep -E "WARN|ERROR|FATAL" "$WORK/broker.log" | head -20 || true
exit "$status"
