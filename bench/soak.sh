#!/usr/bin/env bash
# Soak: one long open-loop run at a steady rate against the lab's shipment service on a real
# store (issue 17, point 6). `knee serve --state` (SQLite, the seed's read and write flows) on
# CPU 0 (its cache at 10k entries), `knee run` on CPU 1 at twice the seed's peak by default: 833.33 reads/s of
# GET /tracking/{shipment} and 194.44 writes/s of POST /events, 1 M shipments drawn by Zipf's law.
# Every SAMPLE seconds it prints one line: the server's and the client's resident set (VmRSS, MB)
# and open file descriptors, the server's /health counters (requests answered in the last
# sample, open connections, refused, header timeouts, idle closes, store errors, cache entries)
# and the store's size on disk. At the end it checks what a soak must show:
#   - flat: from the second sample to the last, the server's and the client's RSS stay within
#     5 MB (knee's own goal for the client of at most 5 MB an hour, issue 11), and the file
#     descriptors each side holds besides its connections stay the same (fds less the open
#     connections, within 1: the open-loop pool opens connections when requests queue and the
#     server closes those idle past --idle-timeout, so the fd count itself moves with the load);
#     no connection was refused, no header timed out, no store error;
#   - every request accounted: the client's sent (warm-up included) equals the requests the
#     server answered less the sampler's own /health reads, every sent request completed, and
#     no errors on either side;
# then prints PASS or FAIL per check (exit 1 on a FAIL). The load average before the run is
# printed; rerun when it is above 1.0 on 2 cores.
#
# usage: bench/soak.sh [KNEE_BINARY] [seconds, default 3600] [sample every, default 60]
#                      [reads/s, default 833.33] [writes/s, default 194.44]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
SECS=${2:-3600}; SAMPLE=${3:-60}; READS=${4:-833.33}; WRITES=${5:-194.44}
# The in-process cache holds at most this many tracking states: small enough that it is full
# within the first sample, so the server's RSS after that is the leak test, not the cache filling.
CACHE=10k
for tool in taskset curl python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install util-linux curl python3" >&2; exit 2; }
done
[ -x "$KNEE" ] || { echo "missing knee binary $KNEE: build it first (make run)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (server on CPU 0, client on CPU 1); this host has $(nproc)" >&2; exit 2; }
[ "$SECS" -ge $((2 * SAMPLE)) ] || { echo "run at least two samples long: seconds >= 2 x sample" >&2; exit 2; }

tmp=$(mktemp -d)
serve_pid=; run_pid=
trap '[ -n "$run_pid" ] && kill $run_pid 2>/dev/null; [ -n "$serve_pid" ] && kill $serve_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; true' EXIT
"$KNEE" lab data --state "$tmp/state" --records 1M > "$tmp/data.out"
taskset -c 0 "$KNEE" serve --port 0 --state "$tmp/state" --cache-entries "$CACHE" > "$tmp/serve.out" 2>&1 & serve_pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/serve.out" && break; sleep 0.1; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$tmp/serve.out" | grep -o '[0-9]*$') ||
  { echo "knee serve did not start:" >&2; cat "$tmp/serve.out" >&2; exit 1; }
base=http://127.0.0.1:$port
echo '{"no":"{shipment}","state":"in_transit","zone":"z{conn}","step":2,"atMs":{seq}}' > "$tmp/event.json"

rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
health() { curl -s "$base/health"; }
store_mb() { du -cm "$tmp/state"/shipments.db* 2>/dev/null | awk 'END{print $1}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (rerun when above 1.0 on 2 cores)"
echo "knee serve --state (1 M shipments, SQLite) on CPU 0 at $base; knee run on CPU 1:" \
  "$READS reads/s + $WRITES writes/s for $SECS s, a sample every $SAMPLE s"
health > "$tmp/health.0"
taskset -c 1 "$KNEE" run "$base/" --shipments 1M --zipf 1.0 -w 5s -d "${SECS}s" -q \
  --mix "GET /tracking/{shipment}=$READS/s,POST /events @$tmp/event.json=$WRITES/s" \
  --json "$tmp/run.json" > "$tmp/run.out" 2>&1 & run_pid=$!
start=$(date +%s)
printf '%6s %9s %6s %9s %6s %9s %5s %7s %7s %7s %6s %8s %8s\n' t_s srv_rss srv_fd cli_rss cli_fd \
  answered open refused hdr_to idle_cl st_err cache store_mb > "$tmp/samples"
head -1 "$tmp/samples"
prev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totalRequests"])' "$tmp/health.0")
n=1
while kill -0 "$run_pid" 2>/dev/null; do
  target=$((start + n * SAMPLE))
  while [ "$(date +%s)" -lt "$target" ] && kill -0 "$run_pid" 2>/dev/null; do sleep 1; done
  kill -0 "$run_pid" 2>/dev/null || break
  h=$(health)
  line=$(python3 - "$h" "$prev" <<'PY'
import json, sys
h = json.loads(sys.argv[1]); c = h["connections"]
print(h["totalRequests"], h["totalRequests"] - int(sys.argv[2]), c["open"], c["refused"],
      c["headerTimeouts"], c["idleClosed"], h["store"]["errors"], h["cache"]["entries"])
PY
)
  read -r total answered open refused hdr idle sterr cache <<< "$line"
  prev=$total
  printf '%6d %9.1f %6d %9.1f %6d %9d %5d %7d %7d %7d %6d %8d %8s\n' $((n * SAMPLE)) \
    "$(awk -v k="$(rss_kb $serve_pid)" 'BEGIN{print k/1024}')" "$(fds $serve_pid)" \
    "$(awk -v k="$(rss_kb $run_pid)" 'BEGIN{print k/1024}')" "$(fds $run_pid)" \
    "$answered" "$open" "$refused" "$hdr" "$idle" "$sterr" "$cache" "$(store_mb)" | tee -a "$tmp/samples"
  n=$((n + 1))
done
rc=0; wait "$run_pid" || rc=$?; run_pid=
[ "$rc" -eq 0 ] || { echo "knee run failed (exit $rc):" >&2; cat "$tmp/run.out" >&2; exit 1; }
health > "$tmp/health.end"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/samples" "$tmp/run.json" "$tmp/health.0" "$tmp/health.end" <<'PY'
import json, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
run = json.load(open(sys.argv[2]))
h0, h1 = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
fails = 0
def check(ok, what):
    global fails
    fails += not ok
    print(("PASS " if ok else "FAIL ") + what)
col = lambda i: [float(r[i]) for r in rows[1:]]  # from the second sample: after the caches fill
if len(rows) < 2:
    check(False, f"only {len(rows)} samples: run longer than two sample periods")
    sys.exit(1)
srv_rss, srv_fd, cli_rss, cli_fd, conns = col(1), col(2), col(3), col(4), col(6)
span = lambda v: max(v) - min(v)
srv_other = [f - c for f, c in zip(srv_fd, conns)]
cli_other = [f - c for f, c in zip(cli_fd, conns)]
check(span(srv_rss) <= 5, f"server RSS {min(srv_rss):.1f}..{max(srv_rss):.1f} MB from the second sample on (within 5 MB)")
check(span(cli_rss) <= 5, f"client RSS {min(cli_rss):.1f}..{max(cli_rss):.1f} MB (within 5 MB)")
check(span(srv_other) <= 1 and span(cli_other) <= 1,
      f"fds besides connections: server {min(srv_other):.0f}..{max(srv_other):.0f}, client "
      f"{min(cli_other):.0f}..{max(cli_other):.0f} (within 1); connections open "
      f"{min(conns):.0f}..{max(conns):.0f}, fds server {min(srv_fd):.0f}..{max(srv_fd):.0f}, "
      f"client {min(cli_fd):.0f}..{max(cli_fd):.0f}")
c = h1["connections"]
check(c["refused"] == 0 and c["headerTimeouts"] == 0 and h1["store"]["errors"] == 0,
      f"server: refused {c['refused']}, header timeouts {c['headerTimeouts']}, store errors {h1['store']['errors']}")
sent = run["sent"] + run["warmup"]["sent"]
# Between the two reads the server also answered one /health per sample and the end read itself.
answered = h1["totalRequests"] - h0["totalRequests"] - len(rows) - 1
errors = sum(run.get("errors", {}).values())
check(sent == answered, f"accounted: client sent {sent} (warm-up included), server answered {answered} "
      f"(its /health reads left out)")
check(run["requests"] == run["sent"] and run["ok"] == run["requests"] and errors == 0,
      f"client: {run['requests']} of {run['sent']} measured requests answered ({run['ok']} ok), {errors} errors, "
      f"{run['achieved_rate_rps']:.2f} of {run['target_rate_rps']:.2f} req/s, p99 {run['latency_ns']['p99']/1e6:.2f} ms")
answered_per = [float(r[5]) for r in rows[1:]]
print(f"answered per sample: {min(answered_per):.0f}..{max(answered_per):.0f}; client "
      f"{run['client_cpu_cores']:.3f} cores, of which busy-polling before sends (--spin auto) "
      f"{run['client_spin_ns'] / 1e9 / run['duration_s']:.3f}; send lag p99 "
      f"{run['send_lag_ns']['p99'] / 1e3:.0f} us")
sys.exit(1 if fails else 0)
PY
