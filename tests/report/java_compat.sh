#!/usr/bin/env bash
# Compatibility of knee's HdrHistogram interval logs with the reference implementation,
# HdrHistogram (Debian's libhdrhistogram-java, /usr/share/java/hdrhistogram.jar):
#   1. knee writes a log (hlog_tool write); HdrHistogram's HistogramLogReader (HlogCheck read) and
#      knee's read_hlog (hlog_tool read) both read it and must print the same figures.
#   2. HdrHistogram's HistogramLogWriter (HlogCheck write) logs seeded values and prints the
#      figures of what it recorded; knee's read_hlog must read the same figures from the log.
# Figures, one per line: total count, max, p50, p99, p99.9; all must be equal.
#
#   3. the real knee binary measures `knee serve` with --hlog; HdrHistogram and knee read that log
#      and must print the same figures.
#
# Usage: java_compat.sh HLOG_TOOL HLOGCHECK_JAVA WORK_DIR KNEE
# Fails (never skips) when javac, java or the jar is missing, naming the Debian package.
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: $0 HLOG_TOOL HLOGCHECK_JAVA WORK_DIR KNEE" >&2
  exit 2
fi
tool=$1
java_src=$2
work=$3
knee=$4
jar=/usr/share/java/hdrhistogram.jar

fail() {
  echo "java_compat: FAIL: $*" >&2
  exit 1
}

command -v javac >/dev/null 2>&1 ||
  fail "javac not found: install the Debian package default-jdk-headless (scripts/install-deps.sh)"
command -v java >/dev/null 2>&1 ||
  fail "java not found: install the Debian package default-jre-headless (scripts/install-deps.sh)"
[ -r "$jar" ] ||
  fail "$jar not found: install the Debian package libhdrhistogram-java (scripts/install-deps.sh)"

rm -rf "$work"
mkdir -p "$work/classes"
javac -d "$work/classes" -cp "$jar" "$java_src" || fail "javac could not compile $java_src"
classpath="$jar:$work/classes"

# compare NAME REFERENCE_FILE KNEE_FILE: prints both columns, fails unless they are equal.
compare() {
  local name=$1 reference=$2 knee=$3
  echo "$name"
  printf '  %-6s %16s %16s\n' figure HdrHistogram knee
  paste <(printf '%s\n' count max p50 p99 p99.9) "$reference" "$knee" |
    awk -F'\t' '{ printf "  %-6s %16s %16s%s\n", $1, $2, $3, ($2 == $3 ? "" : "   <- differs") }'
  cmp -s "$reference" "$knee" || fail "$name: HdrHistogram and knee figures differ"
  [ "$(wc -l <"$knee")" -eq 5 ] || fail "$name: expected 5 figures"
}

# 1. knee writes, both read.
"$tool" write "$work/knee.hlog" 42 || fail "hlog_tool write"
java -cp "$classpath" HlogCheck read "$work/knee.hlog" >"$work/knee.hdrhistogram.txt" ||
  fail "HistogramLogReader could not read knee's log"
"$tool" read "$work/knee.hlog" >"$work/knee.knee.txt" || fail "knee could not read its own log"
compare "knee's log (5,000 samples x 10 intervals), read by each:" \
  "$work/knee.hdrhistogram.txt" "$work/knee.knee.txt"

# 2. HdrHistogram writes, knee reads.
"$tool" values "$work/values.txt" 7 25500 || fail "hlog_tool values"
java -cp "$classpath" HlogCheck write "$work/java.hlog" "$work/values.txt" \
  >"$work/java.hdrhistogram.txt" || fail "HistogramLogWriter could not write a log"
"$tool" read "$work/java.hlog" >"$work/java.knee.txt" || fail "knee could not read HdrHistogram's log"
compare "HdrHistogram's log of 25,500 values, recorded by HdrHistogram vs read by knee:" \
  "$work/java.hdrhistogram.txt" "$work/java.knee.txt"

# 3. knee run --hlog against the lab server, both read.
"$knee" serve --port 0 >"$work/serve.out" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$work/serve.out" && break; sleep 0.05; done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/serve.out")
[ -n "$port" ] || fail "knee serve did not start"
"$knee" run "http://127.0.0.1:$port/tracking?no={seq}" -c 8 -d 3s -w 0.5s --hlog "$work/run.hlog" \
  >/dev/null || fail "knee run --hlog"
java -cp "$classpath" HlogCheck read "$work/run.hlog" >"$work/run.hdrhistogram.txt" ||
  fail "HistogramLogReader could not read knee run's log"
"$tool" read "$work/run.hlog" >"$work/run.knee.txt" || fail "knee could not read knee run's log"
compare "knee run --hlog against knee serve (3 intervals), read by each:" \
  "$work/run.hdrhistogram.txt" "$work/run.knee.txt"

echo "java_compat: OK"
