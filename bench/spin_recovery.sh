#!/usr/bin/env bash
# Spin recovery: after a stretch of slow wake-ups, how long does `--spin auto` keep busy-polling?
# `knee serve` on CPU 0; `knee run /fast` open loop at RATE req/s on CPU 1 for SECONDS; from second
# FROM, for LENGTH seconds, a SCHED_FIFO process on CPU 1 busy 2 ms in every 4 (so the client's
# sleeps wake up to 2 ms late, as on a host whose halted vCPUs wake slowly). The stretch makes the
# window cover the 1 ms gap between sends; once it ends the host is quick again and a client that
# noticed stops spinning. Prints, per repeat, the client's cores, its busy-polling seconds, and
# the p99 send lag of the whole run (the stretch included, so it is high by design).
# Ideal: busy-polling about LENGTH/2 seconds, the client's share of its CPU during the stretch
# (polls longer than 50 us, where it lost the CPU, are not counted as spin); before the probes'
# restart (engine/spin_window.h) it ran on for about 2 minutes past the stretch at 1,000 req/s.
# BASELINE=path/to/other/knee alternates that build with KNEE in each repeat (this benchmark's
# peer is knee's previous build: no other load tool adapts its busy-polling) and prints the
# ratio of their median busy-polling.
# Needs root or CAP_SYS_NICE for chrt -f.
#
# usage: [BASELINE=KNEE2] bench/spin_recovery.sh [KNEE_BINARY] [repeats, default 3]
#          [seconds, default 60] [from, default 10] [length, default 10] [rate, default 1000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
REPEATS=${2:-3}; SECS=${3:-60}; FROM=${4:-10}; LENGTH=${5:-10}; RATE=${6:-1000}
BASELINE=${BASELINE:-}
for tool in taskset chrt python3 timeout; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install util-linux python3 coreutils" >&2; exit 2; }
done
[ -x "$KNEE" ] || { echo "missing knee binary $KNEE: build it first (make run)" >&2; exit 2; }
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || { echo "BASELINE=$BASELINE is not an executable knee" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (server on CPU 0, client on CPU 1); this host has $(nproc)" >&2; exit 2; }
[ "$SECS" -gt $((FROM + LENGTH)) ] || { echo "seconds must exceed from + length" >&2; exit 2; }
chrt -f 10 true 2>/dev/null || { echo "chrt -f needs root or CAP_SYS_NICE" >&2; exit 2; }

tmp=$(mktemp -d)
serve_pid=; hog_pid=
trap '[ -n "$hog_pid" ] && kill $hog_pid 2>/dev/null; [ -n "$serve_pid" ] && kill $serve_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; true' EXIT
taskset -c 0 "$KNEE" serve --port 0 > "$tmp/serve.out" 2>&1 & serve_pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/serve.out" && break; sleep 0.1; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$tmp/serve.out" | grep -o '[0-9]*$') ||
  { echo "knee serve did not start:" >&2; cat "$tmp/serve.out" >&2; exit 1; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (rerun when above 1.0 on 2 cores)"
echo "knee run /fast -r $RATE for $SECS s on CPU 1; slow wake-ups from second $FROM for $LENGTH s"

# One run with the slow stretch: prints a row and appends its busy-polling seconds to $tmp/LABEL.
one() { # repeat label binary
  (sleep "$FROM"; exec timeout "$LENGTH" taskset -c 1 chrt -f 10 python3 -c '
import time
while True:
    end = time.perf_counter() + 0.002
    while time.perf_counter() < end:
        pass
    time.sleep(0.002)') & hog_pid=$!
  taskset -c 1 "$3" run "http://127.0.0.1:$port/fast" -r "$RATE" -w 2s -d "${SECS}s" -q \
    --json "$tmp/run.json" > "$tmp/run.out" 2>&1 || { cat "$tmp/run.out" >&2; exit 1; }
  wait "$hog_pid" 2>/dev/null || true; hog_pid=
  python3 - "$1" "$2" "$tmp/run.json" "$tmp/$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[3]))
spin = d["client_spin_ns"] / 1e9
print(f"{sys.argv[1]:>6} {sys.argv[2]:<9} {d['client_cpu_cores']:12.3f} {spin:10.2f} "
      f"{d['send_lag_ns']['p99'] / 1e3:14.1f}")
open(sys.argv[4], "a").write(f"{spin}\n")
EOF
}

printf '%6s %-9s %12s %10s %14s\n' repeat build client_cores spin_s send_lag_p99_us
for r in $(seq "$REPEATS"); do
  one "$r" knee "$KNEE"
  [ -z "$BASELINE" ] || one "$r" baseline "$BASELINE"
done
if [ -n "$BASELINE" ]; then
  python3 - "$tmp/knee" "$tmp/baseline" <<'EOF'
import statistics, sys
k = statistics.median(float(x) for x in open(sys.argv[1]))
b = statistics.median(float(x) for x in open(sys.argv[2]))
ratio = f", knee/baseline {k / b:.2f}" if b > 0 else ""
print(f"median busy-polling: knee {k:.2f} s, baseline {b:.2f} s{ratio}")
EOF
fi
