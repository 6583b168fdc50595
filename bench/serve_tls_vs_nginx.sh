#!/usr/bin/env bash
# Server CPU per request over HTTPS (issue 12, point 9): `knee serve --tls` against Debian's nginx
# on the same load, each alone on CPU 0 (one worker, one event loop), the client (knee run, keep-
# alive HTTP/1.1 over TLS) on CPU 1. Both answer a small fixed body: nginx `return 200` with the
# body of knee serve's /fast. Two loads per round: an open-loop rate both servers carry (the CPU
# they spend for the same work) and a closed loop at C connections (their capacity: which
# resource saturates is printed). Server CPU is utime+stime of the server process from
# /proc/PID/stat over the run; figures per round, ROUNDS rounds, load average before.
#
# PLAIN=1 runs the same comparison over plain HTTP (no certificate, no --tls): the server's CPU
# per request, which bench/serve_vs_nginx.sh (throughput under one wrk) cannot show when the
# client saturates first; knee serve is measured both with epoll and with --io uring. Ends with
# the medians per load and knee over nginx.
#
# usage: bench/serve_tls_vs_nginx.sh [KNEE_BINARY] [seconds, default 5] [rate, default 20000]
#        [connections, default 64] [rounds, default 3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
D=${2:-5}; RATE=${3:-20000}; C=${4:-64}; ROUNDS=${5:-3}
PLAIN=${PLAIN:-0}
if [ "$PLAIN" = 1 ]; then
  scheme=http; host=127.0.0.1; ssl=""; serve_tls=(); client_tls=(); label="plain HTTP/1.1 keep-alive"
else
  scheme=https; host=localhost; ssl=" ssl"; label="TLS, HTTP/1.1 keep-alive"
fi
for tool in taskset /usr/sbin/nginx openssl python3; do
  command -v "$tool" >/dev/null || [ -x "$tool" ] ||
    { echo "missing $tool: apt-get install nginx-light util-linux openssl python3" >&2; exit 2; }
done
tmp=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; true' EXIT
if [ "$PLAIN" != 1 ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
  serve_tls=(--tls --cert "$tmp/cert.pem" --key "$tmp/key.pem"); client_tls=(--cacert "$tmp/cert.pem")
fi
cat > "$tmp/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:18453$ssl reuseport backlog=4096;
$( [ "$PLAIN" = 1 ] || printf '    ssl_certificate %s;\n    ssl_certificate_key %s;\n' "$tmp/cert.pem" "$tmp/key.pem")
    location / { default_type application/json; return 200 '{"ok":true,"instance":"app1"}'; }
  }
}
CONF
mkdir -p "$tmp/logs"
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
start_server() { # name
  if [ "$1" = nginx ]; then
    taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & server_pid=$!
    port=18453
  else
    local io=epoll
    [ "$1" = knee-uring ] && io=uring
    taskset -c 0 "$KNEE" serve "${serve_tls[@]}" --io "$io" --port 18454 > "$tmp/serve.out" & server_pid=$!
    port=18454
  fi
  sleep 0.5
  # nginx's worker is the child that serves; knee serve is one process.
  worker=$server_pid
  if [ "$1" = nginx ]; then worker=$(pgrep -P "$server_pid" | head -1); fi
}
stop_server() { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; server_pid=; }
measure() { # name knee-run-args...
  local name=$1; shift
  local before after out n
  before=$(cpu_ticks "$worker")
  out=$(taskset -c 1 "$KNEE" run "$scheme://$host:$port/fast" "${client_tls[@]}" -w 1s \
        -d "${D}s" --server-pid "$worker" --json - "$@" 2>/dev/null)
  after=$(cpu_ticks "$worker")
  printf '%s\n' "$out" | python3 -c '
import json, sys
name, ticks, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(sys.stdin)
ok = d["ok"]
sat = (d.get("saturated") or {}).get("resource", "?")
# Server CPU over warm-up plus measured phase, per request answered in both.
served = ok + d["warmup"]["completed"]
rps, p99 = d["throughput_rps"], d["latency_ns"]["p99"] / 1e6
us = ticks / hz * 1e6 / max(served, 1)
print(f"{name:12s} {ok:9d} ok {rps:9.0f} req/s  server {us:6.2f} us-cpu/req  p99 {p99:7.3f} ms  saturated: {sat}")
with open(sys.argv[4], "a") as rows:
    print(name.replace(" ", "_"), f"{us:.3f}", file=rows)
' "$name" "$((after - before))" "$(getconf CLK_TCK)" "$tmp/rows"
}
# Over plain HTTP knee serve runs twice: writing with epoll (a send per response) and with
# --io uring (the responses of one loop iteration in one system call).
servers=(nginx knee)
[ "$PLAIN" = 1 ] && servers+=(knee-uring)
echo "knee serve vs nginx ($label), server on CPU 0, client on CPU 1, ${D}s per run"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (rerun when above 1.0 on 2 cores)"
for r in $(seq "$ROUNDS"); do
  echo "round $r"
  for s in "${servers[@]}"; do
    start_server "$s"
    measure "$s -r $RATE" -r "$RATE" -c "$C"
    measure "$s -c $C" -c "$C"
    stop_server
  done
done
median() { awk -v n="$1" '$1 == n {print $2}' "$tmp/rows" | sort -g |
  awk '{a[NR] = $1} END {if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for load in "-r_$RATE" "-c_$C"; do
  n=$(median "nginx_$load")
  for s in "${servers[@]:1}"; do
    k=$(median "${s}_$load")
    awk -v l="${load/_/ }" -v s="$s" -v n="${n:-0}" -v k="${k:-0}" 'BEGIN {
      if (n > 0 && k > 0) printf "median %s: nginx %.2f us-cpu/req, %s %.2f, %s/nginx %.3f\n", l, n, s, k, s, k / n
      else printf "median %s: a run failed\n", l }'
  done
done
