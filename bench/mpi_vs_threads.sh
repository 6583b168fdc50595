#!/usr/bin/env bash
# Client CPU per request of `mpirun -np K knee run` against one knee process with the same total
# connections and -t K, in the same run, against nginx (../shared/bench/nginx.conf: one worker,
# pinned to CPU 0); every client on CPU 1 (mpirun --bind-to none keeps taskset's affinity).
# For each K and repeat it prints requests/s and CPU microseconds per request two ways: the whole
# client process tree from /usr/bin/time (mpirun and its daemons included), and knee's own worker
# threads (client_cpu_ns of the merged result). Runs alternate, so drift hits both alike.
#
# usage: bench/mpi_vs_threads.sh KNEE [connections] [seconds] [repeats]
set -euo pipefail
knee=${1:?usage: mpi_vs_threads.sh KNEE [connections] [seconds] [repeats]}
C=${2:-64}; D=${3:-10}; R=${4:-3}
URL=http://127.0.0.1:18080/
nginx_conf=$(cd "$(dirname "$0")/../../shared/bench" 2>/dev/null && pwd)/nginx.conf
[ -f "$nginx_conf" ] || nginx_conf=/work/shared/bench/nginx.conf
tmp=$(mktemp -d)
started=""
trap '[ -n "$started" ] && kill "$started" 2>/dev/null; rm -rf "$tmp"' EXIT
if ! curl -s -o /dev/null "$URL"; then
  sed "s#/tmp/knee-bench-nginx#$tmp/nginx#g" "$nginx_conf" > "$tmp/nginx.conf"
  taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & started=$!
  for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "target nginx $URL (CPU 0), $C connections, ${D}s per run, clients on CPU 1; load $(cut -d' ' -f1 /proc/loadavg)"
# sum of the records' client_cpu_ns and the measured requests, from a result file
own_cpu() { grep -o '"client_cpu_ns": [0-9]*' "$1" | tail -1 | awk '{print $2}'; }
field() { sed -n "s/^  \"$2\": \\([0-9.e+]*\\),\\{0,1\\}$/\\1/p" "$1"; }
measure() { # label json command...
  local label=$1 json=$2; shift 2
  local out; out=$( { /usr/bin/time -f "__CPU %U %S" taskset -c 1 "$@" > /dev/null; } 2>&1 )
  local cpu; cpu=$(printf '%s\n' "$out" | awk '/__CPU/{print $2+$3}')
  local n; n=$(field "$json" requests); local wsent; wsent=$(sed -n '/^  "warmup": {/,/^  }/s/^    "sent": \([0-9]*\),\{0,1\}$/\1/p' "$json")
  local x; x=$(field "$json" throughput_rps)
  local own; own=$(own_cpu "$json")
  awk -v l="$label" -v n="$n" -v w="$wsent" -v c="$cpu" -v x="$x" -v o="$own" 'BEGIN {
    printf "%-22s %9.0f req/s  %6.2f us-cpu/req (process tree)  %6.2f us-cpu/req (worker threads; warm-up counted in both)\n",
      l, x, c * 1e6 / (n + w), o / 1e3 / (n + w) }'
}
for K in 1 2 4; do
  for r in $(seq "$R"); do
    measure "threads -t $K ($r)" "$tmp/t.json" "$knee" run "$URL" -c "$C" -t "$K" -d "${D}s" -w 1s --json "$tmp/t.json" -q
    measure "mpirun -np $K ($r)" "$tmp/m.json" mpirun --bind-to none -np "$K" "$knee" run "$URL" -c "$C" -d "${D}s" -w 1s --json "$tmp/m.json" -q
  done
done
