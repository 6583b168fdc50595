#!/usr/bin/env bash
# The client at scale: `knee run -c C` and `wrk -c C` in closed loop against nginx (one worker on
# CPU 0, ../shared/bench/nginx.conf with worker_connections raised to hold C), the clients on
# CPU 1, alternating, REPEATS times. Per run: completed requests, requests/s, errors, the client's
# largest resident set (/usr/bin/time), and its growth per connection against the same client at
# 100 connections; per repeat, knee over wrk (requests, RSS; both with one thread). knee raises
# its own open-file limit to the hard one; when that is too low it says so, naming ulimit -n.
#
# usage: bench/client_scale.sh [KNEE] [CONNECTIONS, default 10000] [SECONDS, default 10] [REPEATS, default 3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
C=${2:-10000}; D=${3:-10}; R=${4:-3}
shared=$here/../../shared/bench
[ -d "$shared" ] || shared=/work/shared/bench
for tool in wrk taskset /usr/sbin/nginx curl /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk nginx-light util-linux curl time" >&2; exit 2; }
done
ulimit -n "$(ulimit -Hn)"
tmp=$(mktemp -d)
sed -e "s#/tmp/knee-bench-nginx#$tmp/nginx#g" \
    -e "s#worker_connections [0-9]*;#worker_connections $((C + 1000));#" \
    -e "s#^worker_processes 1;#worker_processes 1; worker_rlimit_nofile $((C + 2000));#" \
    "$shared/nginx.conf" > "$tmp/nginx.conf"
taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; rm -rf "$tmp"' EXIT
URL=http://127.0.0.1:18080/
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
echo "nginx (CPU 0, worker_connections $((C + 1000))) at $URL; clients on CPU 1; $C connections, ${D}s; load $(cut -d' ' -f1 /proc/loadavg)"

maxrss_kb() { sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$1"; }
run_knee() { # connections -> "requests errors maxrss_kb"
  /usr/bin/time -v -o "$tmp/time" taskset -c 1 "$KNEE" run "$URL" -c "$1" -t 1 -d "${D}s" -w 2s \
    --json "$tmp/k.json" -q > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  python3 - "$tmp/k.json" "$(maxrss_kb "$tmp/time")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(j["requests"], sum(j["errors"].values()), sys.argv[2], j["connects"]["opened"])
PY
}
run_wrk() { # connections -> "requests errors maxrss_kb"
  /usr/bin/time -v -o "$tmp/time" taskset -c 1 wrk -t1 -c "$1" -d "${D}s" "$URL" > "$tmp/wrk" 2>&1
  local n e
  n=$(awk '/requests in/{print $1}' "$tmp/wrk")
  e=$(awk '/Socket errors/{gsub(",","");s=$4+$6+$8+$10} /Non-2xx/{n=$5} END{print s+n}' "$tmp/wrk")
  echo "$n $e $(maxrss_kb "$tmp/time") -"
}
base_knee=$(run_knee 100 | awk '{print $3}')
base_wrk=$(run_wrk 100 | awk '{print $3}')
for r in $(seq "$R"); do
  for tool in knee wrk; do
    read -r n e rss opened < <("run_$tool" "$C")
    eval "${tool}_n=$n ${tool}_rss=$rss"
    base=$([ $tool = knee ] && echo "$base_knee" || echo "$base_wrk")
    awk -v t="$tool" -v r="$r" -v n="$n" -v e="$e" -v rss="$rss" -v b="$base" -v c="$C" -v d="$D" -v o="$opened" 'BEGIN{
      printf "run %d %-4s %9d req %8.0f req/s  errors %d  connections %s  max RSS %6.1f MB  %5.0f bytes/connection over -c 100\n",
        r, t, n, n/d, e, o, rss/1024, (rss-b)*1024/(c-100) }'
  done
  awk -v kn="$knee_n" -v wn="$wrk_n" -v kr="$knee_rss" -v wr="$wrk_rss" -v r="$r" \
    'BEGIN{ printf "run %d knee/wrk: requests %.2f, max RSS %.2f\n", r, kn/wn, kr/wr }'
done
