#!/usr/bin/env bash
# How far knee's client CPU per request is from the kernel's floor: wrk, `knee run` and two bare
# load loops that measure nothing (bench/client_floor.cc: epoll, and io_uring with registered
# files and batched submits), each in closed loop with C connections against nginx (one worker on
# CPU 0, ../shared/bench/nginx.conf), the clients on CPU 1, alternating, REPEATS times. CPU per
# request is user+sys of the client process (/usr/bin/time) over its completed requests, as in
# ../shared/bench/peers.sh (its start-up and connects included, alike for every client). One
# round of 1 s runs, every client, is discarded first. Prints the host, every run, the medians
# (failed runs left out), and each client over wrk.
#
# usage: bench/client_floor.sh [KNEE] [CONNECTIONS, default 64] [SECONDS, default 5] [REPEATS, default 3]
# Installs liburing-dev with apt-get when it is missing (to build the io_uring loop).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
C=${2:-64}; D=${3:-5}; R=${4:-3}
shared=$here/../../shared/bench
[ -d "$shared" ] || shared=/work/shared/bench
for tool in wrk taskset /usr/sbin/nginx curl /usr/bin/time g++ python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install wrk nginx-light util-linux curl time g++ python3" >&2; exit 2; }
done
if [ ! -f /usr/include/liburing.h ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liburing-dev) >/tmp/client_floor_apt.log 2>&1 \
    || { echo "could not install liburing-dev (apt-get install liburing-dev, as root): see /tmp/client_floor_apt.log" >&2; exit 2; }
fi
tmp=$(mktemp -d)
nginx_pid=
trap '[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
g++ -O2 -std=c++20 -Wall -Wextra -Werror -o "$tmp/client_floor" "$here/client_floor.cc" -luring
sed "s#/tmp/knee-bench-nginx#$tmp/nginx#g" "$shared/nginx.conf" > "$tmp/nginx.conf"
URL=http://127.0.0.1:18080/
if curl -s -o /dev/null "$URL"; then echo "something already listens on $URL: stop it first" >&2; exit 2; fi
taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & nginx_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
echo "nginx (CPU 0) at $URL; clients on CPU 1; $C connections, ${D}s each; load $(cut -d' ' -f1 /proc/loadavg)"
echo "host: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), kernel $(uname -r), $(/usr/sbin/nginx -v 2>&1), $(g++ --version | head -1)"

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
round() { # seconds
  measure wrk "awk '/requests in/{print \$1}'" wrk -t1 -c"$C" -d"${1}s" "$URL"
  measure knee "$json_requests" "$KNEE" run "$URL" -c "$C" -d "${1}s" -w 0 --json
  measure floor-epoll "$json_requests" "$tmp/client_floor" epoll "$C" "$1"
  measure floor-uring "$json_requests" "$tmp/client_floor" uring "$C" "$1"
}
round 1 > /dev/null  # warm-up, discarded
rows=$tmp/rows
for i in $(seq "$R"); do round "$D"; done | tee "$rows" |
  awk '{printf "%-12s %8s us-cpu/req %10d req\n", $1, $2, $3}'
wrk_median=""
for name in wrk knee floor-epoll floor-uring; do
  read -r med lo hi < <(awk -v n="$name" '$1 == n && $2 != "failed" {print $2}' "$rows" | sort -g |
    awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR]}')
  if [ -z "${med:-}" ]; then echo "median $name: every run failed"; continue; fi
  [ "$name" = wrk ] && wrk_median=$med
  awk -v n="$name" -v m="$med" -v lo="$lo" -v hi="$hi" -v w="${wrk_median:-0}" 'BEGIN {
    printf "median %-12s %6.3f us-cpu/req (%.3f-%.3f), ", n, m, lo, hi
    if (w > 0) printf "%.3f x wrk\n", m / w; else print "no wrk run to compare" }'
done
echo "saturated: CPU 1 runs each client; read the kernel's share with perf record -g on one of them"
