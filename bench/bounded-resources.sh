#!/usr/bin/env bash
# Broker memory with many idle connections and with a client that never reads its answers
# (issue "Reliability campaign", "Bounded resources"). Starts `./pier start` on a free port with
# a fresh data folder, then prints its resident memory and its heap after a full GC:
#   1. after start-up;
#   2. with N idle connections open (each sent one ApiVersions and read the answer);
#   3. with those and one client pipelining M Metadata requests of ~19 KB (1,000 unknown topics
#      each) that never reads: how many it could write before its writes stalled.
#   bench/bounded-resources.sh [idle connections (1000)] [pipelined requests (4000)]
# Needs python3 and the JDK's jcmd on the PATH. Loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IDLE="${1:-1000}"
REQUESTS="${2:-4000}"
WORK="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
METRICS_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

"$ROOT/pier" start --port "$PORT" --data-dir "$WORK/data" --set "pier.metrics.port=$METRICS_PORT" >"$WORK/pier.log" 2>&1 &
for _ in $(seq 1 300); do
  grep -q "Pier is ready" "$WORK/pier.log" 2>/dev/null && break
  sleep 0.2
done
grep -q "Pier is ready" "$WORK/pier.log" || { cat "$WORK/pier.log"; echo "pier did not start" >&2; exit 1; }
BROKER="$(pgrep -f -- "--data-dir $WORK/data" | head -1)"
PIDS+=("$BROKER")

report() {
  jcmd "$BROKER" GC.run >/dev/null
  local rss heap
  rss="$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$BROKER/status")"
  heap="$(jcmd "$BROKER" GC.heap_info | awk '/garbage-first heap/ {sub("K,", "", $6); printf "%.0f", $6 / 1024}')"
  echo "$1: resident ${rss} MiB, heap used after GC ${heap} MiB"
}

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
PIDS+=("$!")
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
PIDS+=("$!")
for _ in $(seq 1 600); do [[ -s "$WORK/nonread.out" ]] && break; sleep 0.1; done
echo "non-reading client: $(cat "$WORK/nonread.out")"
report "with $IDLE idle connections and the non-reading client"
