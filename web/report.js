// knee's HTML report: draws the charts described by the JSON block #knee-data with uPlot
// (embedded before this script), one per <figure id="chart-ID">. The block's shape is documented
// in src/report/html.h. After drawing it writes a self-check into <pre id="knee-selftest">:
// {"charts": [{"id", "series": [{"label", "points"}], "marks", "labels"}], "errors": [...]},
// points = non-null values drawn, errors = anything caught by window.onerror or console.error.
// The browser test (tests/report/html_browser_test.sh) reads it from Chromium's --dump-dom.
(function () {
  'use strict';

  var selftest = { charts: [], errors: [] };
  var byId = {};

  function writeSelftest() {
    var pre = document.getElementById('knee-selftest');
    if (pre) pre.textContent = JSON.stringify(selftest);
  }
  window.addEventListener('error', function (e) {
    selftest.errors.push('error: ' + (e.message || String(e)));
    writeSelftest();
  });
  var consoleError = console.error;
  console.error = function () {
    var parts = [];
    for (var i = 0; i < arguments.length; i++) parts.push(String(arguments[i]));
    selftest.errors.push('console.error: ' + parts.join(' '));
    writeSelftest();
    return consoleError.apply(console, arguments);
  };

  // Red is kept for the knee and saturated resources.
  var palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf',
                 '#bcbd22', '#7f7f7f', '#000000'];
  var markColor = { knee: '#d62728', secondary: '#7f7f7f', level: '#999999' };

  function percentileLabel(x) {
    var p = 100 * (1 - 1 / x);
    if (p <= 0) return '0%';
    return String(Math.round(p * 1000) / 1000) + '%';
  }

  function scaleOf(kind, logY) {
    if (logY) return { distr: 3, log: 10 };
    if (kind === 'log2') return { distr: 3, log: 2 };
    if (kind === 'percentile') return { distr: 3, log: 10 };
    return { auto: true };
  }

  function number(v) {
    if (v == null) return '-';
    var a = Math.abs(v);
    if (a >= 100 || Number.isInteger(v)) return v.toFixed(0);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }

  function drawDecorations(u, spec, record) {
    var ctx = u.ctx;
    var dpr = window.devicePixelRatio || 1;
    var top = u.bbox.top;
    var bottom = u.bbox.top + u.bbox.height;
    ctx.save();
    ctx.font = (12 * dpr) + 'px sans-serif';
    // Every label drawn, as a box, so that no label is drawn over another: mark labels take the
    // first of three rows where they fit (else only their line is drawn), point labels go above
    // their point, or below it when that would cover a label.
    var boxes = [];
    function overlaps(b) {
      return boxes.some(function (o) {
        return b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h;
      });
    }
    var lineHeight = 14 * dpr;
    record.marks = 0;
    (spec.marks || []).forEach(function (m) {
      var x = u.valToPos(m.x, 'x', true);
      if (!isFinite(x)) return;
      var color = markColor[m.style] || '#d62728';
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = (m.style === 'knee' ? 2 : 1) * dpr;
      ctx.setLineDash([5 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.setLineDash([]);
      if (m.style === 'knee') ctx.font = 'bold ' + (13 * dpr) + 'px sans-serif';
      var w = ctx.measureText(m.label).width;
      for (var row = 0; row < 3; row++) {
        var box = { x: x + 4 * dpr, y: top + row * lineHeight, w: w, h: lineHeight };
        if (overlaps(box)) continue;
        ctx.fillText(m.label, box.x, box.y + 12 * dpr);
        boxes.push(box);
        break;
      }
      ctx.font = (12 * dpr) + 'px sans-serif';
      record.marks++;
    });
    record.labels = 0;
    (spec.point_labels || []).forEach(function (l) {
      var xs = u.data[0];
      var idx = xs.indexOf(l.x);
      var ys = u.data[l.series + 1];
      if (idx < 0 || !ys || ys[idx] == null) return;
      var scale = u.series[l.series + 1].scale;
      var px = u.valToPos(xs[idx], 'x', true);
      var py = u.valToPos(ys[idx], scale, true);
      ctx.fillStyle = l.text === 'none' ? '#555555' : '#d62728';
      ctx.font = (l.text === 'none' ? '' : 'bold ') + (12 * dpr) + 'px sans-serif';
      var w = ctx.measureText(l.text).width;
      var lx = Math.min(px - w / 2, u.bbox.left + u.bbox.width - w);
      var above = { x: lx, y: py - 10 * dpr - 12 * dpr, w: w, h: lineHeight };
      var below = { x: lx, y: py + 6 * dpr, w: w, h: lineHeight };
      var box = overlaps(above) || above.y < top ? below : above;
      ctx.fillText(l.text, box.x, box.y + 12 * dpr);
      boxes.push(box);
      record.labels++;
    });
    ctx.restore();
  }

  function draw(spec, figure, logY) {
    var holder = figure.querySelector('.plot');
    holder.innerHTML = '';
    var record = { id: spec.id, series: [], marks: 0, labels: 0 };
    var width = Math.max(360, Math.min(holder.clientWidth || 900, 1300));
    var scales = { x: scaleOf(spec.x.scale, false) };
    var axes = [{
      label: spec.x.label,
      scale: 'x',
      values: spec.x.scale === 'percentile'
        ? function (u, splits) { return splits.map(percentileLabel); }
        : function (u, splits) { return splits.map(function (v) { return v == null ? '' : String(v); }); },
    }];
    if (spec.x.scale === 'percentile') {
      axes[0].splits = function () { return [1, 10, 100, 1000, 10000, 100000]; };
    }
    spec.axes.forEach(function (a, i) {
      var key = i === 0 ? 'y' : 'y2';
      scales[key] = scaleOf(a.scale, i === 0 && logY);
      axes.push({ scale: key, label: a.label, side: i === 0 ? 3 : 1, size: 64,
                  grid: { show: i === 0 },
                  values: function (u, splits) { return splits.map(number); } });
    });
    var series = [{ label: spec.x.label,
                    value: spec.x.scale === 'percentile'
                      ? function (u, v) { return v == null ? '-' : percentileLabel(v); }
                      : function (u, v) { return v == null ? '-' : String(v); } }];
    spec.series.forEach(function (s, i) {
      // A band's edges take the colour of the series they surround (s.of).
      var color = palette[(s.of != null ? s.of : i) % palette.length];
      var opts = {
        label: s.label,
        scale: s.axis === 0 ? 'y' : 'y2',
        stroke: color,
        width: 2,
        spanGaps: spec.id !== 'over_time',
        value: function (u, v) { return number(v); },
        points: { show: s.style !== 'dash', size: s.style === 'points' ? 8 : 5, fill: color },
      };
      if (s.style === 'dash') opts.dash = [8, 5];
      if (s.style === 'points') opts.paths = function () { return null; };
      if (s.style === 'band') {
        opts.width = 1;
        opts.stroke = color + '66';
        opts.points = { show: false };
      }
      series.push(opts);
      var points = 0;
      (spec.data[i + 1] || []).forEach(function (v) { if (v != null) points++; });
      record.series.push({ label: s.label, points: points });
    });
    var opts = {
      width: width,
      height: 340,
      // Room on the right for the last x tick's label (99.999 %) when there is no right axis.
      padding: [16, spec.axes.length > 1 ? 8 : 36, 0, 0],
      scales: scales,
      axes: axes,
      series: series,
      legend: { live: true },
      hooks: { draw: [function (u) { drawDecorations(u, spec, record); writeSelftest(); }] },
    };
    // Shaded ranges between two series (min-max of repeats): [upper, lower] series indexes.
    if (spec.bands && spec.bands.length) {
      opts.bands = spec.bands.map(function (b) {
        return { series: [b.upper + 1, b.lower + 1], fill: palette[b.of % palette.length] + '22' };
      });
    }
    var plot = new uPlot(opts, spec.data, holder);
    record.width = plot.width;
    record.height = plot.height;
    byId[spec.id] = record;
    return plot;
  }

  function addLogToggle(spec, figure, state) {
    var label = document.createElement('label');
    label.className = 'log-toggle';
    var box = document.createElement('input');
    box.type = 'checkbox';
    label.appendChild(box);
    label.appendChild(document.createTextNode(' log scale (' + spec.axes[0].label + ')'));
    box.addEventListener('change', function () {
      state.plot.destroy();
      state.plot = draw(spec, figure, box.checked);
    });
    figure.insertBefore(label, figure.querySelector('.plot'));
  }

  try {
    var data = JSON.parse(document.getElementById('knee-data').textContent);
    data.charts.forEach(function (spec) {
      var figure = document.getElementById('chart-' + spec.id);
      if (!figure) {
        selftest.errors.push('no figure for chart ' + spec.id);
        return;
      }
      try {
        var state = { plot: draw(spec, figure, false) };
        if (spec.log_toggle) addLogToggle(spec, figure, state);
      } catch (e) {
        selftest.errors.push(spec.id + ': ' + (e && e.stack ? e.stack : String(e)));
      }
    });
    selftest.charts = data.charts.map(function (spec) { return byId[spec.id] || { id: spec.id }; });
  } catch (e) {
    selftest.errors.push('report.js: ' + (e && e.stack ? e.stack : String(e)));
  }
  writeSelftest();
})();
