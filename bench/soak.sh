#!/usr/bin/env bash
# Memory against run length: one long `knee run URL -c C --json FILE` (per-second intervals on,
# the case that grew 0.13 MB a second before issue 11) against nginx with one worker
# (../shared/bench/nginx.conf) pinned to CPU 0, knee pinned to CPU 1. Prints knee's resident set
# (VmRSS) at 10 s, 60 s and every checkpoint up to the end, its growth from 10 s, the run's
# throughput and CPU busy shares (the saturated resource beside the figure), and wrk's RSS over
# the same load for comparison. Goal (issue 11): a one-hour run grows no more than 5 MB, so the
# growth from 10 s to 600 s must stay well under that (5 MB / 3600 s * 590 s = 0.82 MB).
#
# usage: bench/soak.sh [KNEE_BINARY] [seconds, default 600] [connections, default 64]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
SECS=${2:-600}; CONNS=${3:-64}
shared=$here/../../shared/bench
[ -d "$shared" ] || shared=$here/../shared/bench
for tool in wrk taskset /usr/sbin/nginx curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk nginx-light util-linux curl" >&2; exit 2; }
done

tmp=$(mktemp -d)
sed "s#/tmp/knee-bench-nginx#$tmp/nginx#g" "$shared/nginx.conf" > "$tmp/nginx.conf"
taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; [ -n "$run_pid" ] && kill $run_pid 2>/dev/null; rm -rf "$tmp"; true' EXIT
run_pid=
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.1; done
url=http://127.0.0.1:18080/

rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_busy() { awk '/^cpu[01] /{print $1, $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
# Samples process $1's RSS at the given seconds after $2 (epoch seconds, fractional).
sample() {
  local pid=$1 start=$2; shift 2
  for t in "$@"; do
    while awk -v s="$start" -v t="$t" -v now="$(date +%s.%N)" 'BEGIN{exit !(now - s < t)}'; do
      kill -0 "$pid" 2>/dev/null || return 0
      sleep 0.2
    done
    printf '%s %s\n' "$t" "$(rss_kb "$pid")"
  done
}
checkpoints() {
  local c=() t
  for t in 10 60 120 300 600 1200 1800 3600; do [ "$t" -lt "$SECS" ] && c+=("$t"); done
  c+=("$((SECS - 1))")  # just before the end
  echo "${c[@]}"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (rerun when above 1.0 on 2 cores)"
before=$(cpu_busy)
start=$(date +%s.%N)
taskset -c 1 "$KNEE" run "$url" -c "$CONNS" -d "${SECS}s" -w 1s --json "$tmp/run.json" \
  > /dev/null & run_pid=$!
# The measured phase starts after the 1 s warm-up; times below are from knee's start.
# shellcheck disable=SC2046
sample "$run_pid" "$start" $(checkpoints) > "$tmp/knee.rss"
wait "$run_pid"; run_pid=
after=$(cpu_busy)
awk 'NR==1{base=$2} {printf "knee  t=%5ds  rss %7.1f MB  growth since 10 s %+6.2f MB\n", $1, $2/1024, ($2-base)/1024}' "$tmp/knee.rss"
python3 - "$tmp/run.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"knee  throughput {d['throughput_rps']:.0f} req/s over {d['duration_s']:.0f} s, "
      f"{len(d['intervals'])} per-second intervals in the JSON")
EOF
paste <(echo "$before") <(echo "$after") | awk '{printf "      %s busy %.0f%% (%s)\n", $1, 100*($5-$2)/($6-$3), $1=="cpu0" ? "nginx" : "knee"}'

# wrk over the same load, for comparison: it keeps one histogram, so its RSS is flat.
start=$(date +%s.%N)
taskset -c 1 wrk -t1 -c"$CONNS" -d"${SECS}s" "$url" > "$tmp/wrk.out" & run_pid=$!
# shellcheck disable=SC2046
sample "$run_pid" "$start" $(checkpoints) > "$tmp/wrk.rss"
wait "$run_pid"; run_pid=
awk 'NR==1{base=$2} {printf "wrk   t=%5ds  rss %7.1f MB  growth since 10 s %+6.2f MB\n", $1, $2/1024, ($2-base)/1024}' "$tmp/wrk.rss"
awk '/Requests\/sec/{printf "wrk   throughput %.0f req/s\n", $2}' "$tmp/wrk.out"
