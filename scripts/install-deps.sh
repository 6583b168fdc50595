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
  libssl-dev                         # OpenSSL EVP base64 of hlog intervals (report/hlog.cc)
  libhdrhistogram-java               # reference HdrHistogram jar: tests/report/java_compat.sh
  default-jdk-headless               # javac/java for tests/report/java_compat.sh
  libgsl-dev                         # GSL nonlinear least squares: the USL fit (analysis/usl.cc)
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
