#!/usr/bin/env bash
# Runs every libFuzzer target of a build for a fixed time each, from its seed corpus
# (tests/fuzz/corpus/<name>/; new inputs go to a scratch corpus, never into the repository).
# Fails when any target reports a crash, an uncaught exception, a sanitizer report, a leak, an
# input slower than the timeout or memory beyond the limit; the input is kept as
# <build>/fuzz-artifacts/<name>/crash-* (or leak-*, timeout-*, oom-*) and its log printed.
#
#   bash tests/fuzz/run_fuzzers.sh <build dir> [seconds per target, default 50] [parallel runs, default nproc]
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-50}
parallel=${3:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
out=$build/fuzz-artifacts
rm -rf "$out"
mkdir -p "$out"

run_one() {  # <name>
  local name=$1 dir=$out/$1
  mkdir -p "$dir/corpus"
  "$build/bin/fuzz_$name" "$dir/corpus" "$here/corpus/$name" -max_total_time="$seconds" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" >"$dir/log" 2>&1
}

names=()
for src in "$here"/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)
  names+=("${name#fuzz_}")
done

declare -A pid_of
failed=0
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$name" &
  pid_of[$name]=$!
  running=$((running + 1))
done
for name in "${names[@]}"; do
  if wait "${pid_of[$name]}"; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name/log")
    echo "fuzz_$name: ${runs:-?} runs in ${seconds} s, no finding"
  else
    failed=1
    echo "fuzz_$name: FAILED (log and input under $out/$name/):"
    grep -v '^#' "$out/$name/log" | tail -40
  fi
done
exit "$failed"
