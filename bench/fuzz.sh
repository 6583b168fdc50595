#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for RUNS executions each (default 10^7), from the
# seed corpora, two at a time (one per core of a 2-core host), and prints per target the
# executions done, the seconds taken, executions per second, the coverage reached and whether
# it found anything. What a target finds (crash-*, timeout-*, oom-* files) is kept in
# OUT/<target>/ with libFuzzer's log; put each one in tests/fuzz/regressions/<target>/ and a
# regression test in the area's tests once fixed.
#
# Build first: cmake --preset fuzz && cmake --build --preset fuzz   (clang, ASan, UBSan)
# usage: bench/fuzz.sh [RUNS] [OUT] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-10000000}
out=${2:-$(mktemp -d /tmp/knee-fuzz.XXXXXX)}
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(response_parser request_parser url lab_request lab_connection hlog document h2 tls)
fi
bin=$root/build/fuzz
for t in "${targets[@]}"; do
  [ -x "$bin/${t}_fuzz" ] || { echo "fuzz.sh: no $bin/${t}_fuzz: build the fuzz preset first" >&2; exit 2; }
done
echo "fuzzing ${targets[*]}: $runs executions each, 2 at a time; findings in $out; load $(cut -d' ' -f1 /proc/loadavg)"

run_one() {
  local t=$1 dir=$out/$1
  mkdir -p "$dir/corpus"
  local start=$SECONDS rc=0
  "$bin/${t}_fuzz" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus" "$root/tests/fuzz/corpus/$t" > "$dir/log" 2>&1 || rc=$?
  local secs=$(( SECONDS - start ))
  local done_runs cov found
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1) || true
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2) || true
  found=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  printf '%-16s %12s runs %7s s %9s exec/s  cov %6s  findings %s (exit %s)\n' "$t" "${done_runs:-?}" \
    "$secs" "$(( ${done_runs:-0} / (secs > 0 ? secs : 1) ))" "${cov:-?}" "$found" "$rc"
}

i=0
for t in "${targets[@]}"; do
  run_one "$t" &
  i=$((i + 1))
  if (( i % 2 == 0 )); then wait; fi
done
wait
