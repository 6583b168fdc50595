#!/usr/bin/env bash
# The HTML report in a real browser: renders the fixtures (a sweep, a run, and the sweep compared
# with itself) with `knee report FILE.json -o FILE.html`, loads each in headless Chromium from a
# file, and checks with html_check that no error was caught (window.onerror, console.error, or an
# "Uncaught" line in Chromium's console log) and that every chart has its series with the right
# number of points; and the Traffic Lab page of `knee model sim --from` the sweep fixture, checked by
# sim_check.js. Also checks that the page names no network address in a src or href. Saves
# screenshots in OUT_DIR (the build folder) to look at.
#
# usage: html_browser_test.sh KNEE HTML_CHECK FIXTURES_DIR OUT_DIR
# Exit 0 pass, 1 fail, 77 skip (only when chromium is not installed: scripts/install-deps.sh
# installs it, so CI runs this).
set -euo pipefail

knee=$1 check=$2 fixtures=$3 out=$4
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium is not installed (scripts/install-deps.sh installs Debian's chromium)"
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)  # file:// URLs need an absolute path
rm -f "$out"/*.html "$out"/*.png "$out"/*.log

browser() {
  # No network: the report must work offline; a fixed virtual time lets timers and uPlot's
  # deferred drawing finish before the DOM is dumped.
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --no-first-run --disable-extensions --disable-sync --hide-scrollbars --mute-audio \
    --user-data-dir="$out/profile" --virtual-time-budget=10000 "$@"
}

status=0
here=$(cd "$(dirname "$0")" && pwd)
# NAME CHECK... : loads the page $out/NAME.html (already written), fails it when it names a network
# address or the console shows an error, runs CHECK... with the dumped DOM as its first argument,
# and saves a screenshot.
load_page() {
  local name=$1
  shift
  local page="$out/$name.html"
  if grep -Eiq '(src|href)="(https?:)?//|url\((https?:)?//' "$page"; then
    echo "FAIL $name: the page names a network address in a src, href or url():"
    grep -Eio '(src|href)="(https?:)?//[^"]*|url\((https?:)?//[^)]*' "$page" | head -5
    status=1
  fi
  browser --enable-logging=stderr --v=0 --window-size=1200,900 --dump-dom "file://$page" \
    >"$out/$name.dom.html" 2>"$out/$name.console.log"
  if grep -E 'CONSOLE.*(Uncaught|Error)' "$out/$name.console.log"; then
    echo "FAIL $name: errors in the browser console (above)"
    status=1
  fi
  echo "== $name"
  local checker=$1
  shift
  if ! "$checker" "$out/$name.dom.html" "$@"; then status=1; fi
  browser --window-size=1400,4800 --screenshot="$out/$name.png" "file://$page" \
    >/dev/null 2>&1 || { echo "FAIL $name: no screenshot"; status=1; }
  if [ -s "$out/$name.png" ]; then echo "screenshot: $out/$name.png"; fi
}
check_page() {  # NAME FIXTURE... : a report of the fixtures, checked by html_check
  local name=$1
  shift
  "$knee" report "$@" -o "$out/$name.html"
  load_page "$name" "$check" "$@"
}
sim_check() { node "$here/sim_check.js" "$@"; }  # DOM FIXTURE
# The Traffic Lab page (knee model sim), calibrated by the sweep fixture, checked by sim_check.js.
check_sim() {
  "$knee" model sim --from "$fixtures/sweep.json" -o "$out/sim.html" >/dev/null
  load_page sim sim_check "$fixtures/sweep.json"
}

check_page sweep "$fixtures/sweep.json"
check_page run "$fixtures/run.json"
# Two copies of one sweep: knee report refuses one file given twice (compared with itself).
cp "$fixtures/sweep.json" "$out/sweep_b.json"
check_page compare "$fixtures/sweep.json" "$out/sweep_b.json"
check_sim
exit $status
