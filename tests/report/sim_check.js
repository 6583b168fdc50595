// sim_check.js DOM.html FIXTURE.json: checks the self-check that web/sim_page.js wrote into
// <pre id="knee-selftest"> of a `knee model sim --from FIXTURE.json` page as Chromium rendered it
// (--dump-dom): no error caught; the three charts drawn, each simulated series with a point per
// load on the curve and the measured series with one per level of the fixture; a verdict per
// level; Little's law within 1 % at the page's load. Run by html_browser_test.sh; exit 0 or 1.
'use strict';
const fs = require('fs');
const [dom, fixture] = process.argv.slice(2);
const html = fs.readFileSync(dom, 'utf8');
const m = html.match(/<pre id="knee-selftest"[^>]*>([^<]*)<\/pre>/);
let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures++;
}
if (!m) {
  console.log('FAIL no self-check in the page');
  process.exit(1);
}
const text = m[1].replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const self = JSON.parse(text || '{}');
const levels = JSON.parse(fs.readFileSync(fixture, 'utf8')).levels.length;
check(Array.isArray(self.errors) && self.errors.length === 0, `no errors caught: ${JSON.stringify(self.errors)}`);
const ids = (self.charts || []).map((c) => c.id).join(',');
check(ids === 'throughput,latency,queue', `charts throughput, latency, queue: ${ids}`);
for (const c of self.charts || []) {
  for (const s of c.series) {
    const measured = s.label.startsWith('measured');
    const want = measured ? levels : self.curve_points;
    check(s.points === want && want >= levels,
          `${c.id}: ${s.label} has ${s.points} points (${measured ? 'one per level' : 'one per load of the curve'}, ${want})`);
  }
}
check((self.agreement || []).length === levels, `a verdict per level: ${JSON.stringify(self.agreement)}`);
check(Math.abs((self.little_ratio || 0) - 1) <= 0.01, `Little's law at the page's load: ratio ${self.little_ratio}`);
check(self.moves >= 1 && self.last_move_ms > 0, `a move drawn in ${self.last_move_ms} ms`);
process.exit(failures ? 1 : 0);
