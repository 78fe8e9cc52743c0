#!/usr/bin/env bash
# Fuzzing campaigns with Jazzer (docs/reliability.md, "Fuzzing"). Runs each target for a time
# limit, one Maven run per target (Jazzer fuzzes one @FuzzTest per JVM), then prints how many
# inputs it ran. The generated corpus stays in <module>/.cifuzz-corpus/ (gitignored) so the next
# campaign starts where this one stopped; an input that fails a target is written by Jazzer into
# src/test/resources/<package>/<Class>Inputs/<method>/ (copied there if Jazzer left it in the
# module folder), so the plain build replays it from then on.
#   bench/fuzz.sh [seconds per target (60)] [target...]     targets: see TARGETS, default all
# Each target gets one Jazzer run of the seconds given. Jazzer 0.24 hands libFuzzer the
# @FuzzTest's maxDuration (60 s) as -max_total_time, then the arguments of the JUnit parameters
# jazzer.internal.arg.0 (a program name it drops), .1, ...; libFuzzer takes the last value of a
# flag, so -max_total_time given that way wins. One long run instead of runs of 60 s in a row
# saves a JVM start, Jazzer's instrumentation and a replay of the whole corpus per minute.
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
  log="$module/target/fuzz-$name.log"
  echo "== $name ($test), $SECONDS_PER_TARGET s"
  JAZZER_FUZZ=1 ./mvnw -o -B test -pl "$module" -am -Dtest="$test" -Dsurefire.failIfNoSpecifiedTests=false \
    -Djazzer.hooks=true -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1=-max_total_time="$SECONDS_PER_TARGET" \
    >"$log" 2>&1
  rc=$?
  result="ok"
  # libFuzzer writes its status lines to the test JVM's stderr, which Maven shows. Its last
  # words are "Done N runs in S second(s)"; after a finding, the last status line "#N ...".
  runs="$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1 | awk '{print $2 " " $5}')"
  [ -z "$runs" ] && runs="$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#') ?"
  [ "$runs" = " ?" ] && runs="0 ?"
  mkdir -p "$module/.cifuzz-corpus"
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$name" "${runs%% *}" "${runs##* }" \
    >>"$module/.cifuzz-corpus/executions.tsv"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)"
  for crash in "$module"/crash-* "$module"/timeout-* "$module"/oom-* "$module"/slow-unit-*; do
    [ -e "$crash" ] && mv "$crash" "$inputs/"
  done
  if [ "$rc" -ne 0 ]; then
    status=1
    result="FINDING or failure (exit $rc), see $log"
    grep -h -A3 '== Java Exception' "$log" | head -8
  fi
  found=$(( $(ls "$inputs" | wc -l) - before ))
  ever="$(awk -F'\t' -v t="$name" '$2 == t { n += $3 } END { print n + 0 }' "$module/.cifuzz-corpus/executions.tsv")"
  line="$name: ${runs%% *} executions in ${runs##* } s ($ever recorded in all), ${cov:-no coverage figure}, new kept inputs: $found, $result"
  summary+=("$line")
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
