#!/usr/bin/env bash
# Fuzzing campaigns with Jazzer (docs/reliability.md, "Fuzzing"). Runs each target for a time
# limit, one Maven run per target (Jazzer fuzzes one @FuzzTest per JVM), then prints how many
# inputs it ran. The generated corpus stays in <module>/.cifuzz-corpus/ (gitignored) so the next
# campaign starts where this one stopped; an input that fails a target is written by Jazzer into
# src/test/resources/<package>/<Class>Inputs/<method>/ (copied there if Jazzer left it in the
# module folder), so the plain build replays it from then on.
#   bench/fuzz.sh [seconds per target (60)] [target...]     targets: see TARGETS, default all
# Builds offline (./mvnw -o): fetch the dependencies once first.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
shift || true

# name = module:class#method
declare -A TARGETS=(
  [frame]="pier-server:io.pier.network.FrameFuzzTest#frames"
  [request]="pier-server:io.pier.network.RequestFuzzTest#request"
  [acks-wire]="pier-server:io.pier.protocol.AcknowledgementBatchesFuzzTest#wireBatches"
  [batch]="pier-engine:io.pier.log.RecordBatchFuzzTest#produceBatch"
  [acks-engine]="pier-engine:io.pier.share.AcknowledgeFuzzTest#acknowledge"
  [log-recovery]="pier-engine:io.pier.log.LogRecoveryFuzzTest#openSegment"
  [state-replay]="pier-engine:io.pier.state.StateReplayFuzzTest#replay"
)
ORDER=(frame request acks-wire batch acks-engine log-recovery state-replay)
if [ "$#" -gt 0 ]; then ORDER=("$@"); fi

cd "$ROOT"
status=0
summary=()
for name in "${ORDER[@]}"; do
  spec="${TARGETS[$name]:-}"
  if [ -z "$spec" ]; then
    echo "unknown target $name; known: ${!TARGETS[*]}" >&2
    exit 2
  fi
  module="${spec%%:*}"
  test="${spec#*:}"
  class="${test%%#*}"
  method="${test#*#}"
  inputs="$module/src/test/resources/${class//.//}Inputs/$method"
  mkdir -p "$inputs"
  log="$module/target/fuzz-$name.log"
  mkdir -p "$module/target"
  echo "== $name ($test), ${SECONDS_PER_TARGET}s"
  JAZZER_FUZZ=1 ./mvnw -o -B test -pl "$module" -am -Dtest="$test" -Dsurefire.failIfNoSpecifiedTests=false \
    -Djazzer.hooks=true "-Djazzer.internal.arg.0=-max_total_time=$SECONDS_PER_TARGET" >"$log" 2>&1
  rc=$?
  output="$module/target/surefire-reports/$class-output.txt"
  # libFuzzer writes its status lines to the test JVM's stderr, which Maven shows: the last
  # words are "Done N runs in S second(s)"; after a finding, take its last status line.
  runs="$(grep -ho 'Done [0-9]* runs in [0-9]* second' "$log" 2>/dev/null | tail -1)"
  [ -z "$runs" ] && runs="$(grep -ho '^#[0-9]*' "$log" 2>/dev/null | tail -1 | sed 's/#\(.*\)/\1 runs before stopping/')"
  cov="$(grep -ho 'cov: [0-9]* ft: [0-9]*' "$log" 2>/dev/null | tail -1)"
  for crash in "$module"/crash-* "$module"/timeout-* "$module"/oom-*; do
    [ -e "$crash" ] && mv "$crash" "$inputs/"
  done
  found="$(git status --porcelain -- "$inputs" | grep -c . || true)"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "   FAILED (exit $rc): see $log and $output"
    grep -h -A3 '== Java Exception' "$log" "$output" 2>/dev/null | head -8
  fi
  line="$name: ${SECONDS_PER_TARGET}s, ${runs:-no stats} (${cov:-no coverage figure}), new kept inputs: $found"
  echo "   $line"
  summary+=("$line")
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
