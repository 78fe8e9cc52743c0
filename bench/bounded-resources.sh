#!/usr/bin/env bash
# Broker memory per bound (issue "Reliability campaign", "Bounded resources"). Starts `./pier start`
# on a free port with a fresh data folder, then prints its resident memory and its heap after a
# full GC:
#   1. after start-up;
#   2. with N idle connections open (each sent one ApiVersions and read the answer);
#   3. with those and one client pipelining M Metadata requests of ~19 KB (1,000 unknown topics
#      each) that never reads: how many it could write before its writes stalled;
#   4. those clients gone, under P producers each pipelining up to 64 produce requests of 1 MiB
#      (acks=all; the broker reads at most 32 requests ahead per connection);
#   5. on a fresh broker, under C share consumers asking for 1 GiB per ShareFetch over a 256 MiB
#      backlog that one producer keeps feeding (the broker acquires within each share-partition's
#      in-flight window and sends the records from the files).
# Under load (4, 5) the heap is measured after a full GC in the middle of the load, and the
# resident memory is sampled every 0.5 s: its peak is printed too. The loads are real Java
# clients (io.pier.bench.BoundedLoad, pier-testkit's test sources), each running S seconds.
#   bench/bounded-resources.sh [idle connections (1000)] [pipelined requests (4000)]
#                              [producers (16)] [share consumers (8)] [seconds of each load (30)]
# PIER_BENCH_PIER_SET="k=v k=v" gives the brokers settings (e.g. queued.max.request.bytes=104857600).
# Needs python3 and the JDK's jcmd on the PATH. Loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IDLE="${1:-1000}"
REQUESTS="${2:-4000}"
PRODUCERS="${3:-16}"
SHARE_CONSUMERS="${4:-8}"
LOAD_SECONDS="${5:-30}"
WORK="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
METRICS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The load's classes and classpath, built before the broker starts so no build runs beside it.
(cd "$ROOT" && ./mvnw -q -B -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test)
LOAD_CP="$ROOT/pier-testkit/target/test-classes:$ROOT/pier-testkit/target/classes:$(cat "$ROOT/pier-testkit/target/bench.classpath")"

# Starts a broker on a fresh data folder ($1) and sets BROKER to its pid.
start_broker() {
  local data="$WORK/$1"
  local settings=()
  for kv in ${PIER_BENCH_PIER_SET:-}; do settings+=(--set "$kv"); done
  "$ROOT/pier" start --port "$PORT" --data-dir "$data" --set "pier.metrics.port=$METRICS_PORT" \
    ${settings[@]+"${settings[@]}"} >"$WORK/$1.log" 2>&1 &
  for _ in $(seq 1 300); do
    grep -q "Pier is ready" "$WORK/$1.log" 2>/dev/null && break
    sleep 0.2
  done
  grep -q "Pier is ready" "$WORK/$1.log" || { cat "$WORK/$1.log"; echo "pier did not start" >&2; exit 1; }
  BROKER="$(pgrep -f -- "--data-dir $data" | head -1)"
  PIDS+=("$BROKER")
}

stop_broker() {
  kill "$BROKER"
  for _ in $(seq 1 300); do kill -0 "$BROKER" 2>/dev/null || return 0; sleep 0.1; done
  echo "the broker did not stop" >&2
  exit 1
}

rss_mib() {
  awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$BROKER/status"
}

# The live heap is what a class histogram counts: it runs a full GC first and counts at that
# moment, where the heap's "used" read after a GC would also count what a load allocated since.
report() {
  local rss heap
  heap="$(jcmd "$BROKER" GC.class_histogram | awk '/^Total/ {printf "%.0f", $3 / 1048576}')"
  rss="$(rss_mib)"
  echo "$1: resident ${rss} MiB, heap used after GC ${heap} MiB"
}

start_broker data
report "after start-up"

python3 - "$PORT" "$IDLE" "$WORK/idle.ready" <<'EOF' &
import socket, struct, sys, time
port, count, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
client = b"idle"
socks = []
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    body = struct.pack(">hhih", 18, 0, i, len(client)) + client  # ApiVersions v0
    s.sendall(struct.pack(">i", len(body)) + body)
    size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
    s.recv(size, socket.MSG_WAITALL)
    socks.append(s)
open(ready, "w").close()
time.sleep(3600)
EOF
IDLE_PID="$!"
PIDS+=("$IDLE_PID")
for _ in $(seq 1 600); do [[ -e "$WORK/idle.ready" ]] && break; sleep 0.1; done
report "with $IDLE idle connections"

python3 - "$PORT" "$REQUESTS" "$WORK/nonread.out" <<'EOF' &
import socket, struct, sys, threading, time
port, total, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
names = [("no-such-topic-%d" % i).encode() for i in range(1000)]
client = b"non-reading"
body = struct.pack(">hhih", 3, 4, 1, len(client)) + client + struct.pack(">i", len(names))
for n in names:
    body += struct.pack(">h", len(n)) + n
body += b"\x00"  # Metadata v4, allow_auto_topic_creation=false
frame = struct.pack(">i", len(body)) + body
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
s.connect(("127.0.0.1", port))
written = [0]
def write():
    try:
        for _ in range(total):
            s.sendall(frame)
            written[0] += 1
    except OSError:
        pass
threading.Thread(target=write, daemon=True).start()
last, since = -1, time.time()
while time.time() - since < 3 and written[0] < total:
    time.sleep(0.2)
    if written[0] != last:
        last, since = written[0], time.time()
with open(out, "w") as f:
    f.write("%d of %d requests (%d bytes each) written before the writes stalled\n" % (written[0], total, len(frame)))
time.sleep(3600)
EOF
NONREAD_PID="$!"
PIDS+=("$NONREAD_PID")
for _ in $(seq 1 600); do [[ -s "$WORK/nonread.out" ]] && break; sleep 0.1; done
echo "non-reading client: $(cat "$WORK/nonread.out")"
report "with $IDLE idle connections and the non-reading client"

kill "$IDLE_PID" "$NONREAD_PID" 2>/dev/null || true
wait "$IDLE_PID" "$NONREAD_PID" 2>/dev/null || true
sleep 2
report "idle again, those clients gone"

# Runs one load of BoundedLoad; reports once it runs at full rate, then the peak resident memory.
load() {
  local mode="$1" clients="$2" what="$3" peak=0 rss
  java -cp "$LOAD_CP" io.pier.bench.BoundedLoad "127.0.0.1:$PORT" "$mode" "$clients" "$LOAD_SECONDS" \
      "$WORK/$mode.ready" >"$WORK/$mode.out" 2>&1 &
  local pid="$!"
  PIDS+=("$pid")
  while kill -0 "$pid" 2>/dev/null && [[ ! -e "$WORK/$mode.ready" ]]; do
    rss="$(rss_mib)"; (( rss > peak )) && peak="$rss"
    sleep 0.5
  done
  [[ -e "$WORK/$mode.ready" ]] || { cat "$WORK/$mode.out"; echo "the $mode load did not start" >&2; exit 1; }
  sleep "$(( LOAD_SECONDS / 3 ))"
  report "under $what"
  while kill -0 "$pid" 2>/dev/null; do
    rss="$(rss_mib)"; (( rss > peak )) && peak="$rss"
    sleep 0.5
  done
  wait "$pid" || { cat "$WORK/$mode.out"; echo "the $mode load failed" >&2; exit 1; }
  cat "$WORK/$mode.out"
  echo "under $what: resident peak ${peak} MiB"
}

load produce "$PRODUCERS" "$PRODUCERS producers pipelining 1 MiB produce requests"
report "after the produce load"
# A fresh broker, so that the share load's resident memory is not what the produce load grew.
stop_broker
start_broker data-share
report "a fresh broker, after start-up"
load share "$SHARE_CONSUMERS" "$SHARE_CONSUMERS share consumers fetching up to 1 GiB at a time"
report "after the share load"
