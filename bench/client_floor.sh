#!/usr/bin/env bash
# How far knee's client CPU per request is from the kernel's floor: wrk, `knee run` and two bare
# load loops that measure nothing (bench/client_floor.cc: epoll, and io_uring with registered
# files and batched submits), each in closed loop with C connections against nginx (one worker on
# CPU 0, ../shared/bench/nginx.conf), the clients on CPU 1, alternating, REPEATS times. CPU per
# request is user+sys of the client process (/usr/bin/time) over its completed requests, as in
# ../shared/bench/peers.sh. Prints every run, the medians, and each client over wrk.
#
# usage: bench/client_floor.sh [KNEE] [CONNECTIONS, default 64] [SECONDS, default 5] [REPEATS, default 3]
# Installs liburing-dev with apt-get when it is missing (to build the io_uring loop).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
C=${2:-64}; D=${3:-5}; R=${4:-3}
shared=$here/../../shared/bench
[ -d "$shared" ] || shared=/work/shared/bench
for tool in wrk taskset /usr/sbin/nginx curl /usr/bin/time g++; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk nginx-light util-linux curl time g++" >&2; exit 2; }
done
if [ ! -f /usr/include/liburing.h ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev) >/dev/null 2>&1 \
    || { echo "could not install liburing-dev (apt-get install liburing-dev)" >&2; exit 2; }
fi
tmp=$(mktemp -d)
g++ -O2 -std=c++20 -o "$tmp/client_floor" "$here/client_floor.cc" -luring
sed "s#/tmp/knee-bench-nginx#$tmp/nginx#g" "$shared/nginx.conf" > "$tmp/nginx.conf"
URL=http://127.0.0.1:18080/
if curl -s -o /dev/null "$URL"; then echo "something already listens on $URL: stop it first" >&2; exit 2; fi
taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
echo "nginx (CPU 0) at $URL; clients on CPU 1; $C connections, ${D}s each; load $(cut -d' ' -f1 /proc/loadavg)"

measure() { # name extractor command... -> "name us_per_request requests"
  local name=$1 extract=$2; shift 2
  local out n cpu
  out=$( { /usr/bin/time -f "__CPU %U %S" taskset -c 1 "$@"; } 2>&1 )
  n=$(printf '%s\n' "$out" | eval "$extract" | head -1)
  cpu=$(printf '%s\n' "$out" | awk '/__CPU/{print $2+$3}')
  awk -v name="$name" -v n="${n:-0}" -v c="${cpu:-0}" 'BEGIN{
    if (n > 0) printf "%s %.3f %d\n", name, c*1e6/n, n; else printf "%s failed 0\n", name }'
}
json_requests="python3 -c 'import json,sys; t=sys.stdin.read(); print(json.loads(t[t.index(\"{\"):t.rindex(\"}\")+1])[\"requests\"])'"
taskset -c 1 wrk -t1 -c"$C" -d1s "$URL" >/dev/null  # warm-up, discarded
rows=$tmp/rows
for i in $(seq "$R"); do
  measure wrk "awk '/requests in/{print \$1}'" wrk -t1 -c"$C" -d"${D}s" "$URL"
  measure knee "$json_requests" "$KNEE" run "$URL" -c "$C" -d "${D}s" -w 0 --json
  measure floor-epoll "$json_requests" "$tmp/client_floor" epoll "$C" "$D"
  measure floor-uring "$json_requests" "$tmp/client_floor" uring "$C" "$D"
done | tee "$rows" | awk '{printf "%-12s %8.3f us-cpu/req %10d req\n", $1, $2, $3}'
wrk_median=""
for name in wrk knee floor-epoll floor-uring; do
  read -r med lo hi < <(awk -v n="$name" '$1 == n {print $2}' "$rows" | sort -g |
    awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR]}')
  [ -n "$wrk_median" ] || wrk_median=$med
  awk -v n="$name" -v m="$med" -v lo="$lo" -v hi="$hi" -v w="$wrk_median" \
    'BEGIN {printf "median %-12s %6.3f us-cpu/req (%.3f-%.3f), %.3f x wrk\n", n, m, lo, hi, m / w}'
done
echo "saturated: CPU 1 runs each client; read the kernel's share with perf record -g on one of them"
