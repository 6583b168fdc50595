#!/usr/bin/env bash
# Installs the Debian 12 packages knee needs to build and test, and only those that are missing.
# Idempotent: asks dpkg which are absent, runs `apt-get update` at most once, then installs them.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # compiler and build
  libcli11-dev                       # command-line options (cli/)
  libfmt-dev                         # formatting
  nlohmann-json3-dev                 # JSON output and parsing
  libgtest-dev libgmock-dev          # unit and end-to-end tests
  util-linux                         # taskset, used by bench/ scripts
  zlib1g-dev                         # HdrHistogram log encoding: zlib-deflated V2 (report/hlog.cc)
  libnghttp2-dev                     # HTTP/2 framing and HPACK (http/h2_client.cc)
  libssl-dev                         # OpenSSL 3: TLS (net/tls.cc), EVP base64 of hlog intervals
  libhdrhistogram-java               # reference HdrHistogram jar: tests/report/java_compat.sh
  default-jdk-headless               # javac/java for tests/report/java_compat.sh
  libgsl-dev                         # GSL nonlinear least squares: the USL fit (analysis/usl.cc)
  chromium                           # headless browser: tests/report/html_browser_test.sh
  libsqlite3-dev                     # embedded SQLite: the ladder's rungs (probes/), the service's store (store/)
  libpq-dev                          # libpq: the service's PostgreSQL store (store/pg_store.cc)
  postgresql                         # initdb/pg_ctl: tests start a PostgreSQL of their own; pgbench
  libhiredis-dev                     # hiredis: the service's optional Redis cache (lab/)
  liburing-dev                       # io_uring: knee serve --io uring (net/send_ring.cc), bench/client_floor.sh
  redis-server                       # tests start a redis-server of their own for --cache redis
  prometheus                         # tests/e2e: scrapes knee serve's /metrics; promtool checks it
  curl                               # tests/e2e: a peer client for knee serve over h1, TLS, h2c, h2
  nginx-light                        # knee lab up: the balancer in front of the replicas (lab/stack.cc)
  fio                                # knee sweep --exec: tests sweep a file's queue depth with fio
  redis-tools                        # redis-benchmark: tests sweep a redis-server with knee sweep --exec
  libopenmpi-dev openmpi-bin         # OpenMPI: mpirun -np K knee run|sweep (engine/mpi_world.cc), tests with 1-3 ranks
  gettext-base                       # envsubst: tests/deploy fills deploy/kubernetes/'s Jobs as the README says
  clang libclang-rt-14-dev           # make test's builds (ASan+UBSan, TSan) and libFuzzer: tests/fuzz, bench/fuzz.sh
  dpkg-dev lintian                   # make deb: dpkg-shlibdeps computes Depends; tests/package checks the .deb with lintian
  man-db strace                      # tests/package: renders the man pages; checks the installed knee opens nothing in the trees
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js and npm: `npm ci` fetches uPlot for the HTML report at build time (src/report/). Asked
# of PATH, not dpkg: a Node.js installed otherwise (nodesource's bundles npm) is fine, and
# Debian's npm package would conflict with it.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
# knee starts nginx, redis-server and PostgreSQL itself, on loopback ports and in its own folders;
# the packages' system services are not wanted. Debian's policy-rc.d (invoke-rc.d(8)) answering
# 101 keeps the installation from starting them; it is removed again afterwards.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
