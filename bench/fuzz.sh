#!/usr/bin/env bash
# Fuzzing campaigns with Jazzer (docs/reliability.md, "Fuzzing"). Runs each target for a time
# limit, one Maven run per target (Jazzer fuzzes one @FuzzTest per JVM), then prints how many
# inputs it ran. The generated corpus stays in <module>/.cifuzz-corpus/ (gitignored) so the next
# campaign starts where this one stopped; an input that fails a target is written by Jazzer into
# src/test/resources/<package>/<Class>Inputs/<method>/ (copied there if Jazzer left it in the
# module folder), so the plain build replays it from then on.
#   bench/fuzz.sh [seconds per target (60)] [target...]     targets: see TARGETS, default all
# Each Jazzer run lasts its @FuzzTest's maxDuration, 60 s (Jazzer 0.24 hands libFuzzer that limit
# after any given on the command line, so it cannot be lowered from here); more seconds mean more
# runs of 60 s in a row, each starting from the corpus the last one left.
# Each run is also recorded in <module>/.cifuzz-corpus/executions.tsv (date, target, executions,
# seconds), next to the corpus it grew, and the summary adds up every run recorded there: the
# executions a target has had across campaigns, toward the 10^7 of reliability.md §8.
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
  mkdir -p "$inputs" "$module/target"
  before="$(ls "$inputs" | wc -l)"
  rounds=$(( (SECONDS_PER_TARGET + 59) / 60 ))
  total_runs=0
  total_seconds=0
  result="ok"
  for round in $(seq 1 "$rounds"); do
    log="$module/target/fuzz-$name-$round.log"
    echo "== $name ($test), run $round of $rounds"
    JAZZER_FUZZ=1 ./mvnw -o -B test -pl "$module" -am -Dtest="$test" -Dsurefire.failIfNoSpecifiedTests=false \
      -Djazzer.hooks=true >"$log" 2>&1
    rc=$?
    # libFuzzer writes its status lines to the test JVM's stderr, which Maven shows. Its last
    # words are "Done N runs in S second(s)"; after a finding, the last status line "#N ...".
    runs="$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1 | awk '{print $2 " " $5}')"
    [ -z "$runs" ] && runs="$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#') ?"
    [ "$runs" = " ?" ] && runs="0 ?"
    total_runs=$(( total_runs + ${runs%% *} ))
    [ "${runs##* }" != "?" ] && total_seconds=$(( total_seconds + ${runs##* } ))
    mkdir -p "$module/.cifuzz-corpus"
    printf '%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$name" "${runs%% *}" "${runs##* }" \
      >>"$module/.cifuzz-corpus/executions.tsv"
    cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)"
    for crash in "$module"/crash-* "$module"/timeout-* "$module"/oom-* "$module"/slow-unit-*; do
      [ -e "$crash" ] && mv "$crash" "$inputs/"
    done
    echo "   ${runs%% *} executions in ${runs##* } s (${cov:-no coverage figure})"
    if [ "$rc" -ne 0 ]; then
      status=1
      result="FINDING or failure (exit $rc), see $log"
      echo "   $result"
      grep -h -A3 '== Java Exception' "$log" | head -8
      break
    fi
  done
  found=$(( $(ls "$inputs" | wc -l) - before ))
  ever="$(awk -F'\t' -v t="$name" '$2 == t { n += $3 } END { print n + 0 }' "$module/.cifuzz-corpus/executions.tsv")"
  line="$name: $total_runs executions in ${total_seconds} s ($ever recorded in all), ${cov:-no coverage figure}, new kept inputs: $found, $result"
  summary+=("$line")
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
