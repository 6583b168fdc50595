#!/usr/bin/env bash
# The Traffic Lab's responsiveness (issue 19, point 5): how long one move of the load slider takes,
# from the new value to the redrawn charts, with REQUESTS simulated requests per move (the page's
# default, 100,000). For each topology, writes `knee model sim --topology T --requests REQUESTS`,
# loads it in headless Chromium with #bench in the URL (the page then moves the slider 20 times
# across its range and records each move: simulation, figures, tables, three uPlot redraws), and
# prints the median and slowest of the 20, per repeat. Real time, not virtual: Chromium runs
# without --virtual-time-budget. Also times the engine alone under Node.js (the same web/sim.js).
# Goal: every median under 100 ms on this machine. Its peer is the engine alone, timed in the
# same run: the page's median over the engine's is what the page adds (figures, tables, charts).
# Run it alone (nothing else on the 2 cores).
#
# usage: bench/sim_redraw.sh [KNEE_BINARY] [repeats, default 3] [requests, default 100000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KNEE=${1:-$here/../build/release/knee}
REPEATS=${2:-3}; REQUESTS=${3:-100000}
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "missing chromium: apt-get install chromium" >&2; exit 2; }
command -v node >/dev/null || { echo "missing node: apt-get install nodejs" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "engine alone (node, $REQUESTS requests at 70 % of saturation, ms):"
node -e "
const sim = require('$here/../web/sim.js');
for (const topology of ['single', 'blocking', 'replicas', 'cache']) {
  const cap = sim.capacity({ topology });
  const times = [];
  for (let i = 0; i < 7; i++) {
    const t0 = process.hrtime.bigint();
    sim.simulate({ topology, rate_rps: 0.7 * cap.rps, requests: $REQUESTS, seed: i + 1 });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log('  ' + topology.padEnd(9) + ' median ' + times[3].toFixed(1) + ', slowest ' + times[6].toFixed(1));
  require('fs').writeFileSync('$work/engine_' + topology, String(times[3]));
}"
echo "page (chromium, 20 slider moves per load, ms):"
for topology in single blocking replicas cache; do
  "$KNEE" model sim --topology "$topology" --requests "$REQUESTS" -o "$work/$topology.html" >/dev/null
  for r in $(seq 1 "$REPEATS"); do
    timeout 180 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
      --disable-background-networking --user-data-dir="$work/profile" --window-size=1300,900 \
      --dump-dom "file://$work/$topology.html#bench" >"$work/dom.html" 2>/dev/null
    node -e "
const html = require('fs').readFileSync('$work/dom.html', 'utf8');
const m = html.match(/<pre id=\"knee-selftest\"[^>]*>([^<]*)<\/pre>/);
const s = JSON.parse(m[1].replace(/&quot;/g, '\"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
if (!s.bench || s.errors.length) { console.log('  $topology run $r: no bench figures ' + JSON.stringify(s.errors)); process.exit(1); }
const engine = Number(require('fs').readFileSync('$work/engine_$topology', 'utf8'));
console.log('  $topology'.padEnd(11) + ' run $r: median ' + s.bench.median_ms.toFixed(1) + ', slowest ' + s.bench.max_ms.toFixed(1) + ' (' + s.bench.requests + ' requests per move; ' + (s.bench.median_ms / engine).toFixed(2) + 'x the engine alone)');"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
