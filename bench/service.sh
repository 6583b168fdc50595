#!/usr/bin/env bash
# The shipment service's figures (issue 13), on SQLite and on a PostgreSQL this script starts
# (initdb + pg_ctl in a temporary folder on a free port; as the user postgres under root), the
# server side (knee serve, postgres) pinned to CPU 0 and the client (knee run) to CPU 1:
#   1. bulk load: knee lab data rows/s (goal: 500,000 rows/s into SQLite); on PostgreSQL beside
#      pgbench -i, the peer that loads with COPY too, on the same server in the same run;
#   2. event writes: POST /events from 64 closed-loop connections at --commit-batch 1, 8, 64:
#      events/s, p50, p99, mean batch (throughput up with the batch); then an open loop at a
#      fixed rate with --commit-delay 2ms, where each event's latency goes up with the batch;
#   3. tracking reads: GET /tracking/{no} from the in-process cache beside /fast on the same
#      server in the same run (ratio), and with the cache off (every read reaches the store);
#   4. billing: records/s of row at a time and set based at 1x, 2x, 4x, 8x records, and whether
#      the seed's 12M records fit the 4-hour window at that rate; then the read flow's p99 while
#      a row-at-a-time run goes on, against its p99 without it.
# Each figure is the median of REPEATS runs after a discarded warm-up; the saturated resource is
# printed with the load figures (knee's own verdict).
#
# usage: bench/service.sh [KNEE_BINARY] [BASE_RECORDS] [REPEATS] [SECONDS] [BILLING_BASE]
# BILLING_BASE (default BASE / 4) is 1x of the billing scales: on PostgreSQL the row-at-a-time job
# slows down as it grows (it halved with every doubling here), so 8x of 100,000 would take an hour.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
BASE=${2:-100000}; REPEATS=${3:-3}; SECS=${4:-4}; BILL=${5:-$((BASE / 4))}
SECTIONS=${SECTIONS:-1234}  # e.g. SECTIONS=4 for the billing figures alone
want() { [[ "$SECTIONS" == *"$1"* ]]; }
for tool in taskset jq curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (make deps)" >&2; exit 2; }
done
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "missing PostgreSQL: apt-get install postgresql" >&2; exit 2; }

tmp=$(mktemp -d); chmod 755 "$tmp"
as_pg=""; [ "$(id -u)" -eq 0 ] && as_pg="runuser -u postgres --"
pgdir=$tmp/pg; mkdir -p "$pgdir"; [ -n "$as_pg" ] && chown postgres "$pgdir"
pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  $as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
$as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U knee --no-instructions >/dev/null
taskset -c 0 $as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
  -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c shared_buffers=1GB" start >/dev/null
pg_url() { echo "postgresql://knee@127.0.0.1:$pgport/$1"; }
createdb_() { "$pgbin/psql" -q "$(pg_url postgres)" -c "CREATE DATABASE $1" >/dev/null; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rows_per_s() { sed -n 's/.*(\([0-9]*\) rows\/s)$/\1/p'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
want 1 && echo "== 1. bulk load (knee lab data --records $((BASE * 10)))"
sq=(); pg=(); pb=()
want 1 && for i in $(seq "$REPEATS"); do
  sq+=("$(taskset -c 0 "$KNEE" lab data --state "$tmp/load$i" --records $((BASE * 10)) | rows_per_s)")
  createdb_ "load$i"
  pg+=("$(taskset -c 1 "$KNEE" lab data --db "$(pg_url "load$i")" --records $((BASE * 10)) | rows_per_s)")
  createdb_ "bench$i"
  # pgbench -i -s 10: 1,000,000 pgbench_accounts rows by COPY (plus 10 branches, 100 tellers).
  start=$(date +%s.%N)
  "$pgbin/pgbench" -q -i -s 10 "$(pg_url "bench$i")" >/dev/null 2>&1
  end=$(date +%s.%N)
  pb+=("$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.0f", 1000110 / (b - a)}')")
  rm -rf "$tmp/load$i"
  printf 'repeat %d: SQLite %s rows/s   PostgreSQL %s rows/s   pgbench -i %s rows/s\n' "$i" "${sq[-1]}" "${pg[-1]}" "${pb[-1]}"
done
want 1 && printf 'median: SQLite %.0f rows/s (goal >= 500000); PostgreSQL %.0f rows/s, pgbench -i %.0f rows/s, knee/pgbench %.2f\n' \
  "$(median "${sq[@]}")" "$(median "${pg[@]}")" "$(median "${pb[@]}")" \
  "$(awk -v a="$(median "${pg[@]}")" -v b="$(median "${pb[@]}")" 'BEGIN{print a/b}')"

# The data sets the rest uses: BASE records for writes and reads (x1), BILL x 1, 2, 4, 8 for
# billing (b1..b8), in SQLite and PostgreSQL.
"$KNEE" lab data --state "$tmp/x1" --records "$BASE" >/dev/null
createdb_ x1; "$KNEE" lab data --db "$(pg_url x1)" --records "$BASE" >/dev/null
for s in 1 2 4 8; do
  "$KNEE" lab data --state "$tmp/b$s" --records $((BILL * s)) >/dev/null
  createdb_ "b$s"; "$KNEE" lab data --db "$(pg_url "b$s")" --records $((BILL * s)) >/dev/null
done

start_server() {  # knee serve on CPU 0 with the given flags; sets $port
  taskset -c 0 "$KNEE" serve --port 0 "$@" > "$tmp/serve.out" 2>&1 & server_pid=$!
  for _ in $(seq 100); do grep -q listening "$tmp/serve.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/serve.out")
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }
run_json() { taskset -c 1 "$KNEE" run "$@" ${server_pid:+--server-pid "$server_pid"} --json - 2>/dev/null; }
event='{"no":"KN0000000042","state":"delivered","zone":"35","step":5}'

want 2 && echo "== 2. event writes (POST /events, 64 connections, closed loop, ${SECS}s each)"
want 2 && for store in sqlite postgresql; do
  flags=(--state "$tmp/x1"); [ "$store" = postgresql ] && flags=(--db "$(pg_url x1)")
  for batch in 1 8 64; do
    start_server "${flags[@]}" --commit-batch "$batch"
    url=http://127.0.0.1:$port/events
    run_json "$url" -m POST -H 'Content-Type: application/json' --body "$event" -c 64 -d 1s -w 0 >/dev/null
    x=(); p50=(); p99=()
    for i in $(seq "$REPEATS"); do
      j=$(run_json "$url" -m POST -H 'Content-Type: application/json' --body "$event" -c 64 -d "${SECS}s" -w 0.5s)
      x+=("$(jq .throughput_rps <<<"$j")"); p50+=("$(jq '.latency_ns.p50/1e6' <<<"$j")"); p99+=("$(jq '.latency_ns.p99/1e6' <<<"$j")")
      verdict=$(jq -r '.saturated.resource + " (" + (.saturated.detail | .[0:90]) + ")"' <<<"$j")
    done
    mb=$(curl -s "http://127.0.0.1:$port/health" | jq .store.meanBatch)
    printf '%-10s batch %2d: %8.0f events/s  p50 %7.3f ms  p99 %7.3f ms  mean batch %5.1f  saturated: %s\n' \
      "$store" "$batch" "$(median "${x[@]}")" "$(median "${p50[@]}")" "$(median "${p99[@]}")" "$mb" "$verdict"
    stop_server
  done
done
want 2 && echo "== 2b. event latency at a fixed rate (open loop 1000 events/s, --commit-delay 2ms)"
want 2 && for store in sqlite postgresql; do
  flags=(--state "$tmp/x1"); [ "$store" = postgresql ] && flags=(--db "$(pg_url x1)")
  for batch in 1 8 64; do
    start_server "${flags[@]}" --commit-batch "$batch" --commit-delay 2ms
    url=http://127.0.0.1:$port/events
    p50=(); p99=()
    for i in $(seq "$REPEATS"); do
      j=$(run_json "$url" -m POST -H 'Content-Type: application/json' --body "$event" -r 1000 -d "${SECS}s" -w 0.5s)
      p50+=("$(jq '.latency_ns.p50/1e6' <<<"$j")"); p99+=("$(jq '.latency_ns.p99/1e6' <<<"$j")")
    done
    printf '%-10s batch %2d: p50 %7.3f ms  p99 %7.3f ms\n' "$store" "$batch" "$(median "${p50[@]}")" "$(median "${p99[@]}")"
    stop_server
  done
done

want 3 && echo "== 3. tracking reads (64 connections, closed loop): cached vs /fast on the same server"
want 3 && for store in sqlite postgresql; do
  flags=(--state "$tmp/x1"); [ "$store" = postgresql ] && flags=(--db "$(pg_url x1)")
  for cache in 100k 0; do
    start_server "${flags[@]}" --cache-entries "$cache"
    t=http://127.0.0.1:$port/tracking/KN0000000042; f=http://127.0.0.1:$port/fast
    run_json "$t" -c 64 -d 1s -w 0 >/dev/null
    xt=(); xf=()
    for i in $(seq "$REPEATS"); do
      xt+=("$(run_json "$t" -c 64 -d "${SECS}s" -w 0.5s | jq .throughput_rps)")
      xf+=("$(run_json "$f" -c 64 -d "${SECS}s" -w 0.5s | jq .throughput_rps)")
    done
    printf '%-10s cache %-4s: tracking %8.0f req/s   /fast %8.0f req/s   ratio %.2f\n' "$store" "$cache" \
      "$(median "${xt[@]}")" "$(median "${xf[@]}")" "$(awk -v a="$(median "${xt[@]}")" -v b="$(median "${xf[@]}")" 'BEGIN{print a/b}')"
    stop_server
  done
done

want 4 && echo "== 4. billing (records/s; the seed's 12M at that rate against the 4 h window)"
want 4 && for store in sqlite postgresql; do
  for s in 1 2 4 8; do
    flags=(--state "$tmp/b$s"); [ "$store" = postgresql ] && flags=(--db "$(pg_url "b$s")")
    for method in row set; do
      r=()
      for i in $(seq "$REPEATS"); do
        r+=("$(taskset -c 0 "$KNEE" lab billing "${flags[@]}" --method "$method" | awk -v m="$method" '$1==m {print $7}')")
      done
      rate=$(median "${r[@]}")
      printf '%-10s %dx (%7d records) %s: %9.0f records/s   12M in %6.2f h: %s\n' "$store" "$s" $((BILL * s)) "$method" "$rate" \
        "$(awk -v r="$rate" 'BEGIN{print 12e6/r/3600}')" "$(awk -v r="$rate" 'BEGIN{print (12e6/r/3600 <= 4) ? "fits" : "misses"}')"
    done
  done
done

if want 4; then
echo "== 4b. the batch's cost to the users: tracking p99 (cache off, 16 connections) with and without a row-at-a-time billing run (PostgreSQL, 2x)"
start_server --db "$(pg_url b2)" --cache-entries 0
t=http://127.0.0.1:$port/tracking/KN0000000042
quiet=(); busy=()
for i in $(seq "$REPEATS"); do
  quiet+=("$(run_json "$t" -c 16 -d "${SECS}s" -w 0.5s | jq '.latency_ns.p99/1e6')")
  curl -s -X POST "http://127.0.0.1:$port/billing/run?date=2026-01-30&method=row" > "$tmp/billing.json" &
  billing=$!
  sleep 0.2
  busy+=("$(run_json "$t" -c 16 -d "${SECS}s" -w 0.5s | jq '.latency_ns.p99/1e6')")
  wait "$billing"
done
printf 'tracking p99: %.3f ms alone, %.3f ms during billing (%.1fx)\n' "$(median "${quiet[@]}")" "$(median "${busy[@]}")" \
  "$(awk -v a="$(median "${quiet[@]}")" -v b="$(median "${busy[@]}")" 'BEGIN{print b/a}')"
stop_server
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
