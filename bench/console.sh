#!/usr/bin/env bash
# What the web console costs (issue 19): starts `./pier start` on free ports with a fresh data
# folder, sets up NGROUPS share groups of PARTITIONS share-partitions each (1,000 by default) with
# RECORDS records per partition, read once by the stock KafkaShareConsumer (most accepted, some
# released then accepted, some rejected) plus one consumer group's committed offsets
# (io.pier.bench.ConsoleLoad, pier-testkit's test sources), then, on the idle broker:
#   1. render time of each page: curl timing over N requests per page (median, p90, max) and its size;
#   2. broker CPU with the console open: ROUNDS rounds of SECONDS seconds without any request,
#      then SECONDS seconds with the biggest share group's page polled once a second (as an open
#      browser tab would, at a tenth of the page's own refresh interval), the broker's CPU time
#      read from /proc/<pid>/stat (user + system, all its threads) before and after each phase.
#   bench/console.sh [groups (10)] [partitions per group (100)] [records per partition (20)]
#                    [requests per page (50)] [seconds per phase (30)] [rounds (2)]
# Never asserted: the figures go to docs/benchmarks.md by hand. Needs curl and python3. Loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NGROUPS="${1:-10}"
PARTITIONS="${2:-100}"
RECORDS="${3:-20}"
REQUESTS="${4:-50}"
SECONDS_PER_PHASE="${5:-30}"
ROUNDS="${6:-2}"
WORK="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT="$(free_port)"
METRICS_PORT="$(free_port)"
TICKS="$(getconf CLK_TCK)"
BROKER=""
cleanup() {
  if [[ -n "$BROKER" ]]; then
    kill "$BROKER" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$BROKER" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The load's classes and classpath, built before the broker starts so no build runs beside it.
(cd "$ROOT" && ./mvnw -q -B -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test)
LOAD_CP="$ROOT/pier-testkit/target/test-classes:$ROOT/pier-testkit/target/classes:$(cat "$ROOT/pier-testkit/target/bench.classpath")"

"$ROOT/pier" start --port "$PORT" --data-dir "$WORK/data" --set "pier.metrics.port=$METRICS_PORT" \
  --set "num.partitions=1" >"$WORK/broker.log" 2>&1 &
for _ in $(seq 1 300); do
  grep -q "Pier is ready" "$WORK/broker.log" 2>/dev/null && break
  sleep 0.2
done
grep -q "Pier is ready" "$WORK/broker.log" || { cat "$WORK/broker.log"; echo "pier did not start" >&2; exit 1; }
BROKER="$(pgrep -f -- "--data-dir $WORK/data" | head -1)"
CONSOLE="http://127.0.0.1:$METRICS_PORT"

echo "setting up $NGROUPS share groups x $PARTITIONS share-partitions, $RECORDS records each..."
java -cp "$LOAD_CP" io.pier.bench.ConsoleLoad "127.0.0.1:$PORT" "$NGROUPS" "$PARTITIONS" "$RECORDS" \
  "$WORK/ready" >"$WORK/load.log" 2>&1 || { cat "$WORK/load.log"; exit 1; }
[[ -f "$WORK/ready" ]] || { cat "$WORK/load.log"; echo "the set-up did not finish" >&2; exit 1; }

# Every share-partition is in the snapshots the console reads once the shards have published them.
shown=0
for _ in $(seq 1 100); do
  shown="$(curl -sf "$CONSOLE/share-groups" | python3 -c '
import re, sys
print(sum(int(v) for v in re.findall(r"data-field=\"share-partitions\" data-value=\"(\d+)\"", sys.stdin.read())))')"
  [[ "$shown" -ge $((NGROUPS * PARTITIONS)) ]] && break
  sleep 0.2
done
echo "share-partitions on /share-groups: $shown"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$BROKER/stat"; }

# Page render times: N sequential requests, each on a new connection, as curl measures them.
BIG_GROUP="$CONSOLE/share-group?id=console-bench-group-0"
printf '\n%-48s %8s %8s %8s %10s\n' "page ($REQUESTS requests each)" "median" "p90" "max" "bytes"
for page in "/" "/share-groups" "/share-group?id=console-bench-group-0" "/consumer-groups" \
    "/consumer-group?id=console-bench-readers" "/metrics"; do
  curl -sf -o /dev/null "$CONSOLE$page"   # once unmeasured
  for _ in $(seq 1 "$REQUESTS"); do
    curl -sf -o /dev/null -w '%{time_total} %{size_download}\n' "$CONSOLE$page"
  done | python3 -c '
import sys
rows = [line.split() for line in sys.stdin if line.strip()]
t = sorted(float(r[0]) * 1000 for r in rows)
size = int(rows[-1][1])
print("%-48s %6.1f ms %5.1f ms %5.1f ms %10d" % (sys.argv[1], t[len(t) // 2], t[int(len(t) * 0.9) - 1], t[-1], size))
' "$page"
done

# Broker CPU without and with a page polled every second.
phase() {
  local polling="$1" before after start end
  before="$(cpu_ticks)"
  start="$(date +%s.%N)"
  if [[ "$polling" == yes ]]; then
    for _ in $(seq 1 "$SECONDS_PER_PHASE"); do
      curl -sf -o /dev/null "$BIG_GROUP" &
      sleep 1
    done
    wait
  else
    sleep "$SECONDS_PER_PHASE"
  fi
  after="$(cpu_ticks)"
  end="$(date +%s.%N)"
  python3 -c "print('%.2f' % (($after - $before) / $TICKS / ($end - $start) * 100))"
}
echo
echo "broker CPU, % of one core, over $SECONDS_PER_PHASE s phases:"
idle_sum=0
poll_sum=0
for r in $(seq 1 "$ROUNDS"); do
  idle="$(phase no)"
  polled="$(phase yes)"
  echo "  round $r: idle $idle %, polling $BIG_GROUP every second $polled %"
  idle_sum="$(python3 -c "print($idle_sum + $idle)")"
  poll_sum="$(python3 -c "print($poll_sum + $polled)")"
done
python3 -c "
i = $idle_sum / $ROUNDS; p = $poll_sum / $ROUNDS
print('mean: idle %.2f %%, polling %.2f %%, the console costs %.2f %% of one core' % (i, p, p - i))"
