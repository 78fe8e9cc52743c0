#!/usr/bin/env bash
# Gateway nemesis (issue 39; docs/reliability.md, "Gateway nemesis"): GatewayNemesisIT runs three
# gateway nodes (`pier gateway` in child JVMs) over one upstream Kafka, each node reaching it through
# a proxy of its own, with a producer and three share consumers that ACCEPT everything, and hits the
# node leading some partitions once per cycle, in turn: SIGKILL and a restart, SIGSTOP past the
# gateway session timeout and SIGCONT, its upstream link cut and restored. Each cycle waits until
# the node's partitions are consumed elsewhere and the records it held are delivered again; at the
# end every acknowledged produce must be accepted exactly once, none delivered after its ACCEPT was
# confirmed, delivery counts rising.
#   bench/gateway-nemesis.sh [cycles (200)] [faults (kill,pause,cut)]
# The second argument cycles through some faults only: `bench/gateway-nemesis.sh 30 cut` measures
# failover after 30 upstream cuts.
# `./mvnw verify` runs the same test with 3 cycles (one of each fault). Each cycle takes 15-25 s.
# Prints the test's summary and cycle lines, and its time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CYCLES="${1:-200}"
FAULTS="${2:-kill,pause,cut}"
cd "$ROOT"
start=$(date +%s)
status=0
./mvnw -B -q verify -pl pier-testkit -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=GatewayNemesisIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dpier.gatewaynemesis.cycles="$CYCLES" -Dpier.gatewaynemesis.faults="$FAULTS" || status=$?
REPORT="pier-testkit/target/failsafe-reports/io.pier.it.gateway.GatewayNemesisIT-output.txt"
grep -h "^GatewayNemesisIT \(summary\|cycle\)" "$REPORT" 2>/dev/null || echo "[gateway-nemesis] no summary in $REPORT"
echo "[gateway-nemesis] $CYCLES cycles ($FAULTS), exit $status, $(( $(date +%s) - start )) s; the nodes' logs: pier-testkit/target/gateway-nemesis-logs"
exit "$status"
