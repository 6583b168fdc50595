#!/usr/bin/env bash
# Client CPU per request over HTTPS (issue 12, point 9): knee against a peer on Debian's nginx
# with a certificate made here (a throw-away CA and a server certificate for localhost), one
# worker pinned to CPU 0; each client pinned to CPU 1, in the same run, alternating, ROUNDS
# times. Three loads:
#   h1      keep-alive HTTP/1.1 over TLS at C connections        knee vs h2load --h1
#   h2      HTTP/2 over TLS, C connections x S streams           knee --h2 --streams S vs h2load -m S
#   newconn a new connection (and TLS handshake) per request     knee --no-keepalive vs wrk with
#           at C connections                                     Connection: close
# Prints, per client and round, completed requests, requests/s and client CPU microseconds per
# request (user+sys of the whole process, /usr/bin/time), and the load average before. nginx's
# CPU 0 busy share is printed beside each figure: the saturated resource.
#
# The lab server's side (`knee serve --tls` against nginx) is bench/serve_tls_vs_nginx.sh.
#
# usage: bench/tls_vs_h2load.sh [KNEE_BINARY] [seconds, default 5] [connections, default 64]
#        [rounds, default 3] [loads, default "h1 h2 newconn"] [streams, default 10]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
D=${2:-5}; C=${3:-64}; ROUNDS=${4:-3}; LOADS=${5:-h1 h2 newconn}; S=${6:-10}
for tool in h2load wrk taskset /usr/sbin/nginx openssl curl /usr/bin/time; do
  command -v "$tool" >/dev/null || [ -x "$tool" ] ||
    { echo "missing $tool: apt-get install nghttp2-client wrk nginx-light util-linux openssl curl time" >&2; exit 2; }
done

tmp=$(mktemp -d)
nginx_pid=
trap '[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"; true' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=knee-bench-ca \
  -keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
  -keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$tmp/ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
  -days 2 -extfile "$tmp/ext" -out "$tmp/server.pem" 2>/dev/null
cat > "$tmp/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 75s;
  server {
    listen 127.0.0.1:18443 ssl http2 reuseport backlog=4096;
    ssl_certificate $tmp/server.pem;
    ssl_certificate_key $tmp/server.key;
    location / { return 200 "ok\n"; }
  }
}
EOF
mkdir -p "$tmp/logs"
taskset -c 0 /usr/sbin/nginx -c "$tmp/nginx.conf" -p "$tmp" & nginx_pid=$!
url=https://localhost:18443/
for _ in $(seq 50); do curl -s -o /dev/null --cacert "$tmp/ca.pem" "$url" && break; sleep 0.1; done

cpu0() { awk '/^cpu0 /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
measure() { # name extractor command...
  local name=$1 extract=$2; shift 2
  local before after out n cpu wall
  before=$(cpu0)
  out=$( { /usr/bin/time -f "__CPU %U %S %e" taskset -c 1 "$@"; } 2>&1 )
  after=$(cpu0)
  n=$(printf '%s\n' "$out" | eval "$extract" 2>/dev/null | head -1)
  read -r cpu wall < <(printf '%s\n' "$out" | awk '/__CPU/{print $2+$3, $4}')
  awk -v name="$name" -v n="${n:-0}" -v c="${cpu:-0}" -v w="${wall:-1}" -v b="$before" -v a="$after" 'BEGIN{
    split(b, x, " "); split(a, y, " ");
    busy = (y[2] > x[2]) ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0;
    if (n > 0) printf "%-8s %10d req %9.0f req/s %7.2f us-cpu/req   nginx CPU 0 %3.0f%% busy\n", name, n, n/w, c*1e6/n, busy;
    else printf "%-8s failed\n", name }'
}
knee_requests="python3 -c 'import json,sys; t=sys.stdin.read(); print(json.loads(t[t.index(\"{\"):t.rindex(\"}\")+1])[\"requests\"])'"
echo "target $url, ${D}s each, client on CPU 1, nginx on CPU 0"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (rerun when above 1.0 on 2 cores)"
for load in $LOADS; do
  case $load in
    h1) echo "== h1: keep-alive HTTP/1.1 over TLS, $C connections" ;;
    h2) echo "== h2: HTTP/2 over TLS, $C connections x $S streams" ;;
    newconn) echo "== newconn: a new TLS connection per request, $C connections" ;;
  esac
  for r in $(seq "$ROUNDS"); do
    echo "round $r"
    case $load in
      h1)
        measure h2load "awk '/^requests:/{print \$8}'" h2load --h1 -c "$C" -D "$D" "$url"
        measure knee "$knee_requests" "$KNEE" run "$url" -c "$C" -d "${D}s" -w 0 --cacert "$tmp/ca.pem" --json ;;
      h2)
        measure h2load "awk '/^requests:/{print \$8}'" h2load -c "$C" -m "$S" -D "$D" "$url"
        measure knee "$knee_requests" "$KNEE" run "$url" --h2 --streams "$S" -c "$C" -d "${D}s" -w 0 --cacert "$tmp/ca.pem" --json ;;
      newconn)
        # wrk counts the requests it completed; it opens a new connection when the server closes.
        measure wrk "awk '/requests in/{print \$1}'" wrk -t1 -c "$C" -d "${D}s" -H "Connection: close" "$url"
        measure knee "$knee_requests" "$KNEE" run "$url" --no-keepalive -c "$C" -d "${D}s" -w 0 --cacert "$tmp/ca.pem" --json ;;
    esac
  done
done
