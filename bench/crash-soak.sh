#!/usr/bin/env bash
# Crash soak (issue "Reliability campaign", item 2; docs/reliability.md): CrashSoakIT starts
# `pier start` in a child JVM and SIGKILLs it at random moments under mixed load (an idempotent
# producer, two share consumers that ACCEPT / RELEASE / REJECT at random and let locks expire, a
# consumer-group member committing after every poll, a transactional producer committing and
# aborting), restarting it on the same data each cycle and checking the oracle (I1, I5, I6, I7,
# committed offsets, atomic transactions) after every restart and at the end.
#   bench/crash-soak.sh [cycles (1000)] [seed] [minutes]
# With minutes, the soak stops after that long (at the end of a cycle) and checks and reports what it ran.
# `./mvnw verify` runs the same test with 6 cycles. Prints the test's summary line and its time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CYCLES="${1:-1000}"
SEED_ARG=()
if [[ $# -ge 2 && -n "$2" ]]; then
  SEED_ARG=("-Dpier.crashsoak.seed=$2")
fi
if [[ $# -ge 3 ]]; then
  SEED_ARG+=("-Dpier.crashsoak.minutes=$3")
fi
cd "$ROOT"
start=$(date +%s)
./mvnw -B -q install -DskipTests -pl pier-engine,pier-server -am
status=0
./mvnw -B -q verify -pl pier-testkit -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=CrashSoakIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpier.crashsoak.cycles="$CYCLES" "${SEED_ARG[@]}" || status=$?
REPORT="pier-testkit/target/failsafe-reports/io.pier.it.soak.CrashSoakIT-output.txt"
grep -h "^CrashSoakIT" "$REPORT" 2>/dev/null || echo "[crash-soak] no summary in $REPORT"
echo "[crash-soak] $CYCLES cycles, exit $status, $(( $(date +%s) - start )) s"
exit "$status"
