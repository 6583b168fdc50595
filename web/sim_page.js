// The Traffic Lab page of `knee model sim`: controls for the topology, the load and the service
// times, the simulation (web/sim.js, embedded before this script, as KneeSim) rerun on every
// move, and three uPlot charts of the curve over load with the current load marked. The page's
// JSON block #knee-sim (src/report/sim.h) gives the starting configuration and, with --from,
// the measured sweep: its points are drawn over the simulated curve and each level is judged
// (agrees / parts). After drawing the page writes a self-check into <pre id="knee-selftest">:
// {"charts": [{"id", "series": [{"label", "points"}]}], "errors", "moves", "last_move_ms",
// "curve_ms", "little_ratio", "agreement": [...]}; with #bench in the URL it first moves the
// load slider 20 times and adds {"bench": {"moves", "median_ms", "max_ms"}}.
(function () {
  'use strict';

  var selftest = { charts: [], errors: [], moves: 0 };
  function writeSelftest() {
    var pre = document.getElementById('knee-selftest');
    if (pre) pre.textContent = JSON.stringify(selftest);
  }
  window.addEventListener('error', function (e) {
    selftest.errors.push('error: ' + (e.message || String(e)));
    writeSelftest();
  });

  var data = JSON.parse(document.getElementById('knee-sim').textContent);
  var cfg = KneeSim.defaults(data.config);  // the fields the command line left out: sim.js's
  var cal = data.calibration;
  if (data.shape) cfg.shape = data.shape;
  var palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#17becf'];

  function fmt(v, unit) {
    if (v == null || !isFinite(v)) return '-';
    var a = Math.abs(v);
    var s = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
    return unit ? s + ' ' + unit : s;
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }

  // ---- controls ----
  var topologies = [
    ['single', '1. A single server (W workers: 1 = an event loop)'],
    ['blocking', '2. A blocking handler sharing the loop with fast requests'],
    ['replicas', '3. Replicas behind a balancer'],
    ['cache', '4. A cache in front of a store'],
  ];
  // [key, label, kind, topologies it applies to ('' = all), options]
  var fields = [
    ['loop', 'load', 'select', '', [['open', 'open loop: arrival rate'], ['closed', 'closed loop: concurrency']]],
    ['dist', 'service times', 'select', '', [['exp', 'exponential'], ['det', 'deterministic']].concat(
      data.shape ? [['measured', 'measured shape']] : [])],
    ['service_ms', 'service time, ms', 'number', 'single blocking replicas'],
    ['workers', 'workers per server (W)', 'int', 'single replicas cache'],
    ['delay_ms', 'network and client delay, ms', 'number', ''],
    ['blocking_share', 'share of blocking requests', 'number', 'blocking'],
    ['blocking_ms', 'blocking time, ms', 'number', 'blocking'],
    ['replicas', 'replicas (R)', 'int', 'replicas'],
    ['policy', 'balancer', 'select', 'replicas', [['round_robin', 'round robin'], ['least_conn', 'least connections'], ['random', 'random']]],
    ['slow_replica', 'slower replica (number, 0 = none)', 'int0', 'replicas'],
    ['slow_factor', 'slower by (x)', 'number', 'replicas'],
    ['hit_ratio', 'cache hit ratio', 'number', 'cache'],
    ['cache_ms', 'cache service time, ms', 'number', 'cache'],
    ['store_ms', 'store service time, ms', 'number', 'cache'],
    ['store_workers', 'store workers', 'int', 'cache'],
    ['requests', 'simulated requests per move', 'int', ''],
    ['seed', 'seed', 'int0', ''],
  ];
  var controls = document.getElementById('controls');
  var inputs = {};
  var topo = el('select', { id: 'topology' });
  topologies.forEach(function (t) { topo.appendChild(el('option', { value: t[0] }, t[1])); });
  topo.value = cfg.topology;
  var row = el('label', { class: 'wide' }, 'topology ');
  row.appendChild(topo);
  controls.appendChild(row);
  fields.forEach(function (f) {
    var label = el('label', { 'data-for': f[3] }, f[1] + ' ');
    var input;
    if (f[2] === 'select') {
      input = el('select', { id: 'f-' + f[0] });
      f[4].forEach(function (o) { input.appendChild(el('option', { value: o[0] }, o[1])); });
    } else {
      input = el('input', { id: 'f-' + f[0], type: 'number', step: f[2] === 'number' ? 'any' : '1' });
    }
    var v = cfg[f[0]];
    if (f[0] === 'slow_replica') v = v + 1;  // shown from 1, 0 = none
    input.value = v;
    label.appendChild(input);
    controls.appendChild(label);
    inputs[f[0]] = { input: input, field: f, label: label };
  });
  var loadRow = el('div', { class: 'load' });
  var loadLabel = el('span', {}, '');
  var slider = el('input', { id: 'load', type: 'range' });
  loadRow.appendChild(el('span', {}, 'load '));
  loadRow.appendChild(slider);
  loadRow.appendChild(loadLabel);
  controls.appendChild(loadRow);
  var message = el('p', { class: 'warning', id: 'config-error' });
  controls.appendChild(message);

  function readConfig() {
    var c = { topology: topo.value, shape: cfg.shape };
    for (var k in inputs) {
      var f = inputs[k].field;
      var raw = inputs[k].input.value;
      c[k] = f[2] === 'select' ? raw : Number(raw);
    }
    c.slow_replica = c.slow_replica - 1;
    return c;
  }
  function showFields() {
    for (var k in inputs) {
      var applies = inputs[k].field[3];
      inputs[k].label.hidden = applies !== '' && applies.split(' ').indexOf(topo.value) < 0;
    }
  }

  // ---- the curve over load ----
  var state = { cap: null, xs: [], curve: [], plots: {} };
  // The loads of the curve: open loop, 10 % to 150 % of the saturation point; closed loop, powers
  // of 2 up to 4 N* (at most 4096) and N* itself; plus the measured levels and `extra` (the
  // starting load from the command line, so the slider can reach it).
  function curveLoads(c, cap, extra) {
    var xs = [];
    if (c.loop === 'open') {
      [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5].forEach(
        function (f) { xs.push(f * cap.rps); });
    } else {
      var top = Math.max(8, Math.min(4096, Math.ceil(4 * cap.knee_concurrency)));
      for (var n = 1; n <= top; n *= 2) xs.push(n);
      if (xs[xs.length - 1] < top) xs.push(top);
      var k = Math.round(cap.knee_concurrency);
      if (k >= 1 && xs.indexOf(k) < 0) xs.push(k);
    }
    // Measured points only on the axis they were measured on (concurrency or rate).
    if (cal && cal.loop === c.loop) cal.points.forEach(function (p) { if (xs.indexOf(p.load) < 0) xs.push(p.load); });
    if (extra && xs.indexOf(extra) < 0) xs.push(extra);
    xs.sort(function (a, b) { return a - b; });
    return xs;
  }
  function at(c, load, requests) {
    var x = Object.assign({}, c, { requests: requests });
    if (c.loop === 'open') x.rate_rps = load; else x.concurrency = Math.max(1, Math.round(load));
    return KneeSim.simulate(x);
  }

  function chartSpecs(c) {
    var xLabel = c.loop === 'open' ? 'offered load, req/s' : 'concurrency';
    var curve = state.curve;
    var specs = [
      { id: 'throughput', title: 'Throughput against load', y: 'req/s',
        series: [['simulated throughput', curve.map(function (r) { return r.throughput_rps; })]],
        measured: cal && cal.loop === c.loop ? ['measured throughput', function (p) { return p.throughput_rps; }] : null },
      { id: 'latency', title: 'Latency against load (log scale)', y: 'ms',
        series: [['simulated p50', curve.map(function (r) { return r.latency.p50; })],
                 ['simulated p99', curve.map(function (r) { return r.latency.p99; })]],
        measured: cal && cal.loop === c.loop ? ['measured p99', function (p) { return p.p99_ms; }] : null },
      { id: 'queue', title: 'Queue and utilisation against load', y: 'requests waiting',
        series: [['mean queue (all nodes)', curve.map(function (r) {
          return r.nodes.reduce(function (s, n) { return s + n.mean_queue; }, 0); })],
                 ['busiest node utilisation, %', curve.map(function (r) {
          return 100 * Math.max.apply(null, r.nodes.map(function (n) { return n.utilisation; })); })]] },
    ];
    specs.forEach(function (s) { s.x = xLabel; });
    return specs;
  }

  function marks(u, c) {
    var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
    var top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
    var list = [{ x: c.loop === 'open' ? state.cap.rps : state.cap.knee_concurrency,
                  label: c.loop === 'open' ? 'saturation' : 'N*', color: '#d62728' },
                { x: Number(slider.value), label: 'now', color: '#333333' }];
    ctx.save();
    ctx.font = (12 * dpr) + 'px sans-serif';
    list.forEach(function (m, i) {
      var x = u.valToPos(m.x, 'x', true);
      if (!isFinite(x)) return;
      ctx.strokeStyle = m.color;
      ctx.fillStyle = m.color;
      ctx.lineWidth = (i === 0 ? 2 : 1) * dpr;
      ctx.setLineDash(i === 0 ? [5 * dpr, 4 * dpr] : []);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.fillText(m.label, x + 4 * dpr, top + (12 + 14 * i) * dpr);
    });
    ctx.restore();
  }

  function drawCharts(c) {
    var holder = document.getElementById('charts');
    Object.keys(state.plots).forEach(function (k) { state.plots[k].destroy(); });
    state.plots = {};
    holder.innerHTML = '';
    selftest.charts = [];
    // Every figure first, so each plot takes its column's final width.
    var specs = chartSpecs(c);
    var divs = specs.map(function (spec) {
      var fig = el('figure', { class: 'chart', id: 'chart-' + spec.id });
      fig.appendChild(el('figcaption', {}, spec.title));
      var plotDiv = el('div', { class: 'plot' });
      fig.appendChild(plotDiv);
      holder.appendChild(fig);
      return plotDiv;
    });
    specs.forEach(function (spec, n) {
      var plotDiv = divs[n];
      var d = [state.xs];
      var series = [{ label: spec.x }];
      var record = { id: spec.id, series: [] };
      spec.series.forEach(function (s, i) {
        d.push(s[1]);
        series.push({ label: s[0], stroke: palette[i], width: 2, scale: spec.id === 'queue' && i === 1 ? 'pct' : 'y',
                      value: function (u, v) { return fmt(v); } });
        record.series.push({ label: s[0], points: s[1].filter(function (v) { return v != null; }).length });
      });
      if (spec.measured) {
        var ys = state.xs.map(function (x) {
          var p = cal.points.filter(function (q) { return q.load === x; })[0];
          return p ? spec.measured[1](p) : null;
        });
        d.push(ys);
        series.push({ label: spec.measured[0], stroke: '#000000', width: 0, paths: function () { return null; },
                      points: { show: true, size: 9, fill: '#000000' }, value: function (u, v) { return fmt(v); } });
        record.series.push({ label: spec.measured[0], points: ys.filter(function (v) { return v != null; }).length });
      }
      var axes = [{ label: spec.x }, { label: spec.y, size: 64 }];
      // From 0, so a flat ceiling looks flat rather than magnified.
      var scales = { x: { time: false }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; } } };
      // Latency on a log scale: past saturation it grows by orders of magnitude, and a linear
      // axis would flatten everything below it to 0.
      if (spec.id === 'latency') scales.y = { distr: 3, log: 10 };
      if (spec.id === 'queue') {
        axes.push({ label: 'utilisation, %', scale: 'pct', side: 1, grid: { show: false }, size: 56 });
        scales.pct = { range: [0, 100] };
      }
      // The figure's own width: two abreast on a wide window (report.css's chart grid).
      var width = Math.max(360, Math.min(plotDiv.clientWidth || 600, 1300));
      var plot = new uPlot({ width: width, height: 300, scales: scales, axes: axes, series: series,
                             legend: { live: true },
                             hooks: { draw: [function (u) { marks(u, c); }] } }, d, plotDiv);
      state.plots[spec.id] = plot;
      selftest.charts.push(record);
    });
  }

  // ---- the figures at the current load ----
  function table(rows, head) {
    var t = el('table', { class: 'summary' });
    var tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', {}, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el('tr', r.cls ? { class: r.cls } : {});
      r.cells.forEach(function (v) { row.appendChild(el('td', {}, v)); });
      t.appendChild(row);
    });
    return t;
  }
  function showNow(c, r) {
    var now = document.getElementById('now');
    now.innerHTML = '';
    var lines = [];
    var cap = state.cap;
    lines.push(c.loop === 'open'
      ? 'offered ' + fmt(Number(slider.value), 'req/s') + ' (' + fmt(100 * Number(slider.value) / cap.rps) + ' % of the saturation point ' + fmt(cap.rps, 'req/s') + ', set by ' + cap.bottleneck + ')'
      : Number(slider.value) + ' in flight (N* = ' + fmt(cap.knee_concurrency) + ': X max ' + fmt(cap.rps, 'req/s') + ' x R min ' + fmt(cap.min_latency_ms, 'ms') + ')');
    lines.push('throughput ' + fmt(r.throughput_rps, 'req/s') + '; latency mean ' + fmt(r.latency.mean, 'ms') +
               ', p50 ' + fmt(r.latency.p50, 'ms') + ', p99 ' + fmt(r.latency.p99, 'ms'));
    if (r.classes) {
      lines.push('fast requests p50 ' + fmt(r.classes.fast.p50, 'ms') + ', p99 ' + fmt(r.classes.fast.p99, 'ms') +
                 '; blocking requests p99 ' + fmt(r.classes.blocking.p99, 'ms'));
    }
    lines.push("Little's law: L = " + fmt(r.little.l) + ' requests in the system; X x R = ' + fmt(r.throughput_rps, 'req/s') +
               ' x ' + fmt(r.latency.mean, 'ms') + ' = ' + fmt(r.little.x_times_r) + ' (ratio ' + (r.little.ratio || 0).toFixed(3) + ')');
    if (c.loop === 'open' && r.backlog_growth_rps > 0.02 * r.throughput_rps) {
      lines.push('unstable: the backlog grew by ' + fmt(r.backlog_growth_rps, 'req/s') +
                 ' during the run; past saturation latency depends on how long the load lasts');
    }
    var ul = el('ul', { class: 'verdicts' });
    lines.forEach(function (l) { ul.appendChild(el('li', {}, l)); });
    now.appendChild(ul);
    now.appendChild(table(r.nodes.map(function (n) {
      return { cells: [n.name, String(n.servers), fmt(100 * n.utilisation) + ' %', fmt(n.mean_queue),
                       fmt(n.mean_in_node), String(n.requests), fmt(n.mean_wait_ms)],
               cls: n.utilisation > 0.95 ? 'knee' : '' };
    }), ['node', 'workers', 'utilisation', 'mean queue', 'mean in node', 'requests', 'mean wait, ms']));
    selftest.little_ratio = r.little.ratio;
  }

  function showAgreement(c) {
    var box = document.getElementById('agreement');
    if (!box) return;
    box.innerHTML = '';
    if (!cal) return;
    if (c.loop !== cal.loop) {
      box.appendChild(el('p', { class: 'warning' }, 'The measured sweep is ' + cal.loop + ' loop; set the load to the same to compare.'));
      return;
    }
    selftest.agreement = [];
    var rows = cal.points.map(function (p) {
      var r = state.curve[state.xs.indexOf(p.load)];
      var dx = r.throughput_rps / p.throughput_rps - 1;
      var d99 = p.p99_ms ? r.latency.p99 / p.p99_ms - 1 : 0;
      var agrees = Math.abs(dx) <= 0.1 && Math.abs(d99) <= 0.25;
      var verdict = agrees ? 'agrees'
        : 'parts: ' + (Math.abs(dx) > 0.1
          ? 'the model\'s throughput is ' + fmt(100 * Math.abs(dx)) + ' % ' + (dx > 0 ? 'above' : 'below') + ' the measured'
          : 'the model\'s p99 is ' + (d99 > 0 ? fmt(r.latency.p99 / p.p99_ms) + 'x the measured' : fmt(p.p99_ms / r.latency.p99) + 'x below the measured'));
      selftest.agreement.push(agrees);
      return { cells: [String(p.load), fmt(p.throughput_rps), fmt(r.throughput_rps), fmt(p.p99_ms), fmt(r.latency.p99), verdict],
               cls: agrees ? '' : 'knee' };
    });
    box.appendChild(table(rows, [c.loop === 'open' ? 'rate, req/s' : 'concurrency', 'measured req/s', 'simulated req/s',
                                 'measured p99, ms', 'simulated p99, ms', 'verdict']));
    box.appendChild(el('p', {}, 'A level agrees when the simulated throughput is within 10 % of the measured and its p99 within 25 %. ' +
      'Past the knee a real server often parts from the model: it adds overhead (context switches, lock waits, a full accept queue) that a queue of fixed service times has not.'));
  }

  // ---- runs ----
  // A field the simulation refuses: its message, and no figures or curves left from before.
  function configError(e) {
    message.textContent = e.message;
    selftest.config_error = e.message;
    document.getElementById('now').innerHTML = '';
    Object.keys(state.plots).forEach(function (k) { state.plots[k].destroy(); });
    state.plots = {};
    document.getElementById('charts').innerHTML = '';
    writeSelftest();
  }
  function rebuild() {
    var c = readConfig();
    message.textContent = '';
    delete selftest.config_error;
    showFields();
    try {
      state.cap = KneeSim.capacity(c);
    } catch (e) {
      configError(e);
      return false;
    }
    var t0 = performance.now();
    // The starting load comes from the command line (--rate, -c) on the first draw only.
    var first = !state.drawn;
    var before = Number(slider.value);  // read before min and max move: the browser clamps it
    var start = first ? (c.loop === 'open' ? cfg.rate_rps : cfg.concurrency) : null;
    var perPoint = Math.max(2000, Math.min(20000, Math.round(c.requests / 5)));
    state.xs = curveLoads(c, state.cap, start);
    state.curve = state.xs.map(function (x) { return at(c, x, perPoint); });
    selftest.curve_ms = performance.now() - t0;
    selftest.curve_points = state.xs.length;
    // Open loop: the same share of the (new) saturation point as before, 70 % at first or
    // after a change of loop, or the rate from the command line. Closed loop: the same
    // concurrency, or the command line's.
    var value;
    if (c.loop === 'open') {
      value = start || (state.loop === 'open' && state.fraction ? state.fraction * state.cap.rps : 0.7 * state.cap.rps);
      slider.min = String(Math.max(1, state.cap.rps * 0.01));
      slider.max = String(Math.max(1.5 * state.cap.rps, value));
      slider.step = String(state.cap.rps / 200);
    } else {
      value = start || (state.loop === 'closed' ? before : 1);
      slider.min = '1';
      slider.max = String(state.xs[state.xs.length - 1]);
      slider.step = '1';
    }
    slider.value = String(Math.min(Number(slider.max), Math.max(Number(slider.min), value)));
    state.loop = c.loop;
    state.drawn = true;
    drawCharts(c);
    showAgreement(c);
    return move();
  }
  function move() {
    var c = readConfig();
    var t0 = performance.now();
    var r;
    try {
      r = at(c, Number(slider.value), c.requests);
    } catch (e) {
      configError(e);
      return false;
    }
    if (c.loop === 'open') state.fraction = Number(slider.value) / state.cap.rps;
    loadLabel.textContent = c.loop === 'open' ? ' ' + fmt(Number(slider.value), 'req/s') : ' ' + slider.value + ' in flight';
    showNow(c, r);
    Object.keys(state.plots).forEach(function (k) { state.plots[k].redraw(false, false); });
    selftest.moves++;
    return new Promise(function (resolve) {
      // uPlot draws in a microtask; this one runs after it.
      Promise.resolve().then(function () {
        selftest.last_move_ms = performance.now() - t0;
        writeSelftest();
        resolve(selftest.last_move_ms);
      });
    });
  }

  var pending = false;
  slider.addEventListener('input', function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; move(); });
  });
  topo.addEventListener('change', rebuild);
  for (var k in inputs) inputs[k].input.addEventListener('change', rebuild);

  try {
    var first = rebuild();
    if (location.hash === '#bench' && first) {
      first.then(function () {
        var times = [];
        var lo = Number(slider.min), hi = Number(slider.max);
        var step = function (i) {
          if (i === 20) {
            times.sort(function (a, b) { return a - b; });
            selftest.bench = { moves: times.length, median_ms: (times[9] + times[10]) / 2, max_ms: times[19],
                               requests: readConfig().requests };
            writeSelftest();
            return null;
          }
          slider.value = String(lo + (hi - lo) * ((i * 7) % 20) / 19);
          return move().then(function (ms) { times.push(ms); return step(i + 1); });
        };
        return step(0);
      });
    }
  } catch (e) {
    selftest.errors.push('sim_page.js: ' + (e && e.stack ? e.stack : String(e)));
    writeSelftest();
  }
})();
