#!/usr/bin/env bash
# Nemesis soak (reliability scenario S50; docs/reliability.md): NemesisSoakIT runs the crash soak's
# mixed load (an idempotent producer, two share consumers that ACCEPT / RELEASE / REJECT at random
# and let locks expire, a consumer-group member committing after every poll, a transactional
# producer) against `pier start` in a child JVM reached through a fault-injecting proxy, and hits
# it with one random fault per cycle: SIGKILL or SIGTERM and a restart on the same data, SIGSTOP for
# 1-8 s, a burst of connection resets, a latency spike or a partition outlasting the record lock,
# lost answers to one API, or a share consumer cut off and replaced. The oracle (I1, idempotence,
# I5, I6, I7, I11, committed offsets, atomic transactions) is checked after every fault and at the end.
#   bench/nemesis-soak.sh [duration: 90m for minutes, 500 for cycles (60m)] [seed]
# `./mvnw verify` runs the same test with 8 cycles. PIER_NO_INSTALL=1 skips installing pier-engine
# and pier-server first (when the installed jars already match the tree). Prints the test's summary
# lines, the faults of each cycle in the report, and its time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LENGTH="${1:-60m}"
if [[ "$LENGTH" =~ ^([0-9]+)m$ ]]; then
  LENGTH_ARG=("-Dpier.nemesis.minutes=${BASH_REMATCH[1]}")
elif [[ "$LENGTH" =~ ^[0-9]+$ ]]; then
  LENGTH_ARG=("-Dpier.nemesis.cycles=$LENGTH")
else
  echo "usage: bench/nemesis-soak.sh [90m | 500] [seed]" >&2
  exit 2
fi
SEED_ARG=()
if [[ $# -ge 2 ]]; then
  SEED_ARG=("-Dpier.nemesis.seed=$2")
fi
cd "$ROOT"
start=$(date +%s)
if [[ "${PIER_NO_INSTALL:-0}" != 1 ]]; then
  ./mvnw -B -q install -DskipTests -pl pier-engine,pier-server -am
fi
status=0
./mvnw -B -q verify -pl pier-testkit -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=NemesisSoakIT -Dfailsafe.failIfNoSpecifiedTests=false \
  "${LENGTH_ARG[@]}" "${SEED_ARG[@]}" || status=$?
REPORT="pier-testkit/target/failsafe-reports/io.pier.it.soak.NemesisSoakIT-output.txt"
grep -h "^NemesisSoakIT" "$REPORT" 2>/dev/null || echo "[nemesis-soak] no summary in $REPORT"
echo "[nemesis-soak] $LENGTH, exit $status, $(( $(date +%s) - start )) s; each cycle's fault: grep '^nemesis cycle' $REPORT"
exit "$status"
