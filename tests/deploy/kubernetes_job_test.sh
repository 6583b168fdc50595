#!/usr/bin/env bash
# Runs the commands of deploy/kubernetes/ on this host as Kubernetes would run them: the load
# Job's container command once per completion index (two "pods" at once, with the env the
# manifest gives them, knee on PATH), then the merge Job's command, on a shared folder standing
# in for the results volume. Checks that the merged result holds both parts and every request
# the lab server answered. Usage: kubernetes_job_test.sh KNEE DEPLOY_DIR
set -euo pipefail
knee=$1
deploy=$2
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/results"
ln -s "$knee" "$work/bin/knee"
"$knee" serve --port 0 > "$work/serve.out" &
server_pid=$!
for _ in $(seq 50); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\).*/\1/p' "$work/serve.out" | head -1)
[ -n "$port" ] || { echo "FAIL: the lab server did not start"; exit 1; }

export IMAGE=unused URL="http://127.0.0.1:$port/fast" LOAD_HOSTS=2 CONNECTIONS=4 DURATION=1s
export START_AT=$(( $(date +%s) + 3 )) RWX_STORAGE_CLASS=unused
# As README.md says: only knee's own variables; JOB_COMPLETION_INDEX is the pod's.
envsubst '${IMAGE} ${URL} ${LOAD_HOSTS} ${CONNECTIONS} ${DURATION} ${START_AT}' \
  < "$deploy/knee-load.yaml" > "$work/load.yaml"
envsubst '${IMAGE}' < "$deploy/knee-merge.yaml" > "$work/merge.yaml"
# The container's `args` (a folded scalar in the load Job, one line in the merge Job).
container_script() {
  sed -n '/^ *args:/,/^ *\(env\|volumeMounts\):/p' "$1" | sed '1d;$d' |
    sed -e 's/^ *- >-$//' -e 's/^ *- //' -e 's/^ *//' | tr '\n' ' '
}
load=$(container_script "$work/load.yaml")
merge=$(container_script "$work/merge.yaml")
case "$load" in *'--part "$JOB_COMPLETION_INDEX/'*) ;; *)
  echo "FAIL: the load Job does not split by completion index: $load"; exit 1;;
esac

before=$(curl -s "http://127.0.0.1:$port/health" | sed 's/.*"totalRequests":\([0-9]*\).*/\1/')
pids=()
for index in 0 1; do
  # /results is the shared volume: here a folder, reached through a symlink-free rewrite.
  (cd "$work" && PATH="$work/bin:$PATH" JOB_COMPLETION_INDEX=$index \
     /bin/sh -c "${load//\/results/$work/results}") > "$work/pod$index.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$work"/pod*.log; echo "FAIL: a load pod failed"; exit 1; }; done
after=$(curl -s "http://127.0.0.1:$port/health" | sed 's/.*"totalRequests":\([0-9]*\).*/\1/')
PATH="$work/bin:$PATH" /bin/sh -c "${merge//\/results/$work/results}" > "$work/merge.log" 2>&1 ||
  { cat "$work/merge.log"; echo "FAIL: the merge Job failed"; exit 1; }

all="$work/results/all.json"
[ -s "$all" ] || { echo "FAIL: no merged result"; exit 1; }
grep -q "merged from 2 parts" "$work/merge.log" || { cat "$work/merge.log"; echo "FAIL: no parts table"; exit 1; }
# Top-level fields of the 2-space indented JSON: the measured requests and the warm-up's.
measured=$(sed -n 's/^  "sent": \([0-9]*\),$/\1/p' "$all")
warmup=$(sed -n '/^  "warmup": {/,/^  }/s/^    "sent": \([0-9]*\),\{0,1\}$/\1/p' "$all")
sent=$(( measured + warmup ))
want=$(( after - before - 1 ))
[ "$sent" -eq "$want" ] || { echo "FAIL: merged result sent $sent, the server answered $want"; exit 1; }
# A missing part is refused, not merged.
rm "$work/results/part.1.json" "$all"
if PATH="$work/bin:$PATH" /bin/sh -c "${merge//\/results/$work/results}" > "$work/merge2.log" 2>&1; then
  echo "FAIL: merging one part of two succeeded"; exit 1
fi
grep -q "part 1 of 2 is missing" "$work/merge2.log" || { cat "$work/merge2.log"; echo "FAIL: wrong refusal"; exit 1; }
[ ! -e "$all" ] || { echo "FAIL: a half-merged result was written"; exit 1; }
echo "PASS: 2 pods, $sent requests merged, the server answered $want"
