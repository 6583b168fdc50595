#!/usr/bin/env bash
# Seed 004's storage table on this host with `knee sweep --exec`: fio direct-I/O 4 KiB random
# reads on a file, queue depths 1, 4, 16, 64, 256 (libaio), --repeat 3; then two contrasts where
# the disk is not the limit: the same job capped with --rate_iops (the tool's own pacing), and a
# file in /dev/shm (tmpfs: no device; buffered, since tmpfs has no O_DIRECT). Each table names
# the knee and the limit per level; the JSON of each lands in OUT.
#
# usage: bench/fio_sweep.sh [KNEE_BINARY] [DIR for the 1 GiB test file, default .] [OUT, default
#        /tmp/knee-fio] [seconds per run, default 5]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
DIR=${2:-.}; OUT=${3:-/tmp/knee-fio}; SECS=${4:-5}
command -v fio >/dev/null || { echo "missing fio: apt-get install fio" >&2; exit 2; }
mkdir -p "$OUT"
file="$DIR/knee-fio-$$.dat"; shm="/dev/shm/knee-fio-$$.dat"
trap 'rm -f "$file" "$shm"' EXIT
job="--name=randread --rw=randread --bs=4k --ioengine=libaio --iodepth={N} --runtime=$SECS --time_based --ramp_time=1 --output-format=json"
# Lay the file out first: its writes would otherwise land in the first level's disk figures.
fio --name=layout --filename="$file" --size=1G --create_only=1 --output=/dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$KNEE" sweep --quiet --exec "fio $job --filename=$file --size=1G --direct=1" \
  --levels 1,4,16,64,256 --repeat 3 --json "$OUT/device.json"
echo
"$KNEE" sweep --quiet --exec "fio $job --filename=$file --size=1G --direct=1 --rate_iops=5000" \
  --levels 1,4,16,64 --json "$OUT/capped.json"
echo
"$KNEE" sweep --quiet --exec "fio $job --filename=$shm --size=256M" \
  --levels 1,4,16,64 --json "$OUT/tmpfs.json"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
