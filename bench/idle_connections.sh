#!/usr/bin/env bash
# Memory of `knee serve` per idle keep-alive connection: opens N connections (default 10,000),
# each sends one request and then stays idle; prints the server's resident set (VmRSS) before and
# after, the bytes per connection, and /health's connection counts. Then a request on 1,000 of
# them again, to show the read buffers go back to the pool. Needs python3 and N + 100 open files.
#
# usage: bench/idle_connections.sh [KNEE] [N] [knee serve flags, e.g. --io uring]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
N=${2:-10000}
shift $(( $# < 2 ? $# : 2 ))
command -v python3 >/dev/null || { echo "needs python3: apt-get install python3" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)"
python3 - "$KNEE" "$N" "$@" <<'PY'
import socket, subprocess, time, sys, json, urllib.request, resource

K = sys.argv[1]; N = int(sys.argv[2]); SERVE_ARGS = sys.argv[3:]
p = subprocess.Popen([K, "serve", "--port", "0"] + SERVE_ARGS, stdout=subprocess.PIPE, text=True)
port = int(p.stdout.readline().split(":")[-1])
def rss(): return int([l for l in open(f"/proc/{p.pid}/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
def health(): return json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health").read())
health(); time.sleep(0.2); before = rss()
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(N)]
for s in socks: s.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
for s in socks: s.recv(4096)
for _ in range(100):
    if health()["connections"]["open"] >= N + 1: break
    time.sleep(0.05)
time.sleep(0.2); after = rss()
print(f"{K}: {N} connections, idle after one request each: RSS {before/1e6:.1f} -> {after/1e6:.1f} MB, {(after-before)/N:.0f} bytes each, /health {health()['connections']}")
# a request on each of 1000 of them, then idle again: buffers go back to the pool
for s in socks[:1000]: s.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
for s in socks[:1000]: s.recv(4096)
time.sleep(0.2); used = rss()
print(f"after one request on 1000 of them: RSS {used/1e6:.1f} MB, {(used-before)/N:.0f} bytes each")
p.terminate(); print("exit", p.wait())
PY
