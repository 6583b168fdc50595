// knee's Traffic Lab engine: a discrete-event simulation of the course's topologies, with no
// DOM, so the same code runs in the page (web/sim_page.js) and under Node.js in the tests
// (tests/report/sim_theory_test.js checks it against M/M/1, M/M/c, D/D/c and Little's law).
//
// KneeSim.simulate(config) -> result. Times are in ms, rates in req/s. config:
//   topology: 'single'   one station of `workers` servers (1 = an event loop, more = a pool)
//             'blocking' one event loop; a share `blocking_share` of requests block it for
//                        `blocking_ms` (deterministic), the rest take the service time
//             'replicas' `replicas` stations of `workers` servers behind a balancer `policy`
//                        ('round_robin', 'least_conn': fewest requests in the replica, ties in
//                        turn, as nginx's least_conn; 'random'); replica `slow_replica` (index,
//                        -1 none) takes `slow_factor` times the service time
//             'cache'    a cache station (`workers` servers, `cache_ms`) answers a share
//                        `hit_ratio` of requests; the others go on to a store station
//                        (`store_workers` servers, `store_ms`)
//   service_ms, dist: 'det' | 'exp' | 'measured' (then shape: [[q, x]...], the inverse CDF of
//             the service time divided by its mean, q from 0 to 1, piecewise linear)
//   loop: 'open' (arrivals at `rate_rps`, `arrivals` 'poisson' or 'uniform') or 'closed'
//             (`concurrency` clients, each sends its next request when the last one returns)
//   delay_ms: a fixed delay every response takes back to the client (the network and the
//             client's own time: an infinite-server stage, not a queue), part of the latency
//   requests: measured requests (after `warmup` more at the start; default requests / 10, and in
//             a closed loop at least 4 x concurrency)
//   seed: 32-bit integer; the same config and seed give the same result, bit for bit
// The measured window runs from the arrival of request `warmup` to that of request
// `warmup + requests`; arrivals stop there, the requests still inside finish (so their latency
// is counted) but time averages and throughput cover the window only.
// result: { throughput_rps, offered_rps, window_ms, requests, latency: {mean, p50, p90, p99,
//   p999, max} (ms), classes (blocking: {fast, blocking} latencies), nodes: [{name,
//   utilisation, mean_queue (waiting, not in service), mean_in_node, requests, mean_wait_ms}],
//   little: {l, x_rps, r_ms, x_times_r, ratio}, backlog_growth_rps }
// KneeSim.capacity(config) -> {rps, bottleneck, min_latency_ms, knee_concurrency}: the
//   asymptotic bounds (Denning and Buzen 1978): rps, the saturation point, is the highest
//   arrival rate every station keeps up with (past it the bottleneck's queue grows; with round
//   robin and a slower replica, or a cache, other stations still add throughput); the
//   latency of a request that never waits, and N* = X_max * R_min, where a closed loop's
//   throughput bound turns from rising to flat.
(function (root, factory) {
  'use strict';
  var api = factory();
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.KneeSim = api;
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  // sfc32 (Chris Doty-Humphrey's Small Fast Chaotic generator), seeded through splitmix32;
  // returns uniforms in (0, 1), never 0, so -log(u) is finite.
  function makeRandom(seed) {
    var s = seed >>> 0;
    function split() {
      s = (s + 0x9e3779b9) | 0;
      var z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    }
    var a = split(), b = split(), c = split(), d = split();
    for (var i = 0; i < 12; i++) next();
    function next() {
      var t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return ((t >>> 0) + 0.5) / 4294967296;
    }
    return next;
  }

  // A sampler of service times with mean `mean` ms.
  function makeSampler(dist, mean, shape, random) {
    if (dist === 'exp') return function () { return -mean * Math.log(random()); };
    if (dist === 'measured') {
      if (!shape || shape.length < 2) throw new Error('dist measured needs a shape');
      return function () {
        var u = random();
        var i = 1;
        while (i < shape.length - 1 && shape[i][0] < u) i++;
        var q0 = shape[i - 1][0], q1 = shape[i][0];
        var f = q1 > q0 ? (u - q0) / (q1 - q0) : 0;
        return mean * (shape[i - 1][1] + f * (shape[i][1] - shape[i - 1][1]));
      };
    }
    if (dist !== 'det') throw new Error('dist must be det, exp or measured, not ' + dist);
    return function () { return mean; };
  }

  // The mean of a shape's piecewise-linear inverse CDF (1 for a shape normalised to its mean).
  function shapeMean(shape) {
    var m = 0;
    for (var i = 1; i < shape.length; i++) {
      m += (shape[i][0] - shape[i - 1][0]) * (shape[i][1] + shape[i - 1][1]) / 2;
    }
    return m;
  }

  // A binary min-heap of (time, id) in typed arrays.
  function Heap(capacity) {
    this.t = new Float64Array(capacity);
    this.v = new Int32Array(capacity);
    this.n = 0;
  }
  Heap.prototype.push = function (time, id) {
    if (this.n === this.t.length) {
      var t = new Float64Array(this.n * 2), v = new Int32Array(this.n * 2);
      t.set(this.t);
      v.set(this.v);
      this.t = t;
      this.v = v;
    }
    var i = this.n++;
    var ts = this.t, vs = this.v;
    while (i > 0) {
      var p = (i - 1) >> 1;
      if (ts[p] <= time) break;
      ts[i] = ts[p];
      vs[i] = vs[p];
      i = p;
    }
    ts[i] = time;
    vs[i] = id;
  };
  // Removes the earliest; its time is in this.topT, its id returned.
  Heap.prototype.pop = function () {
    var ts = this.t, vs = this.v;
    var id = vs[0];
    this.topT = ts[0];
    var n = --this.n;
    if (n > 0) {
      var time = ts[n], v = vs[n];
      var i = 0;
      for (;;) {
        var l = 2 * i + 1;
        if (l >= n) break;
        var r = l + 1;
        var c = r < n && ts[r] < ts[l] ? r : l;
        if (ts[c] >= time) break;
        ts[i] = ts[c];
        vs[i] = vs[c];
        i = c;
      }
      ts[i] = time;
      vs[i] = v;
    }
    return id;
  };

  function Station(name, servers, sampler, capacity) {
    this.name = name;
    this.servers = servers;
    this.sample = sampler;
    this.busy = 0;
    this.queue = new Int32Array(Math.max(16, capacity));
    this.head = 0;
    this.len = 0;
    this.requests = 0;     // arrivals inside the window
    this.waitSum = 0;      // their waits for a server, ms
    this.busyArea = 0;     // integral of busy servers over the window, ms
    this.queueArea = 0;    // integral of waiting requests
    this.last = 0;
  }
  Station.prototype.enqueue = function (r) {
    if (this.len === this.queue.length) {
      var q = new Int32Array(this.queue.length * 2);
      for (var i = 0; i < this.len; i++) q[i] = this.queue[(this.head + i) % this.queue.length];
      this.queue = q;
      this.head = 0;
    }
    this.queue[(this.head + this.len) % this.queue.length] = r;
    this.len++;
  };
  Station.prototype.dequeue = function () {
    var r = this.queue[this.head];
    this.head = (this.head + 1) % this.queue.length;
    this.len--;
    return r;
  };

  // The largest `requests` (and warm-up) a run takes: 2 x 10^7 doubles of latencies is 160 MB
  // (three times that for the blocking topology, which keeps each class's too).
  var kMaxRequests = 20000000;

  function defaults(c) {
    var d = {
      topology: 'single', workers: 1, service_ms: 5, dist: 'exp', shape: null,
      blocking_share: 0.01, blocking_ms: 100, replicas: 3, policy: 'round_robin',
      slow_replica: -1, slow_factor: 1, hit_ratio: 0.8, cache_ms: 0.2, store_ms: 5,
      store_workers: 1, loop: 'open', rate_rps: 100, arrivals: 'poisson', concurrency: 1,
      delay_ms: 0, requests: 100000, warmup: null, seed: 1,
    };
    for (var k in c) if (Object.prototype.hasOwnProperty.call(c, k)) d[k] = c[k];
    // A closed loop's first requests all start together: the warm-up covers a few rounds of
    // every client, not only a tenth of the requests.
    if (d.warmup == null) {
      d.warmup = Math.floor(d.requests / 10);
      if (d.loop === 'closed' && Number.isInteger(d.concurrency)) {
        d.warmup = Math.max(d.warmup, 4 * d.concurrency);
      }
    }
    return d;
  }

  // Throws an Error naming the first field that is not what simulate() needs: numbers must be
  // numbers (a string "5" would add as text), finite, in range.
  function check(c) {
    function number(name) {
      if (typeof c[name] !== 'number' || !isFinite(c[name])) throw new Error(name + ' must be a finite number');
    }
    function positive(name) {
      number(name);
      if (!(c[name] > 0)) throw new Error(name + ' must be a number > 0');
    }
    function share(name) {
      number(name);
      if (!(c[name] >= 0 && c[name] <= 1)) throw new Error(name + ' must be in 0..1');
    }
    function count(name, min) {
      if (!(Number.isInteger(c[name]) && c[name] >= min)) throw new Error(name + ' must be an integer >= ' + min);
    }
    count('workers', 1);
    count('requests', 1);
    count('warmup', 0);
    if (c.requests + c.warmup > kMaxRequests) {
      throw new Error('requests must be at most ' + kMaxRequests + ' with the warm-up (a closed loop warms up over 4 x concurrency)');
    }
    if (!Number.isInteger(c.seed)) throw new Error('seed must be an integer');
    positive('service_ms');
    number('delay_ms');
    if (c.delay_ms < 0) throw new Error('delay_ms must be >= 0');
    if (['exp', 'det', 'measured'].indexOf(c.dist) < 0) throw new Error('dist must be det, exp or measured');
    if (c.dist === 'measured') checkShape(c.shape);
    if (c.loop === 'open') {
      positive('rate_rps');
      if (['poisson', 'uniform'].indexOf(c.arrivals) < 0) throw new Error('arrivals must be poisson or uniform');
    } else if (c.loop === 'closed') {
      count('concurrency', 1);
      if (c.concurrency > kMaxRequests / 8) throw new Error('concurrency must be at most ' + kMaxRequests / 8);
    } else {
      throw new Error("loop must be 'open' or 'closed'");
    }
    if (c.topology === 'blocking') {
      share('blocking_share');
      positive('blocking_ms');
    } else if (c.topology === 'replicas') {
      count('replicas', 1);
      positive('slow_factor');
      if (!(Number.isInteger(c.slow_replica) && c.slow_replica >= -1 && c.slow_replica < c.replicas)) {
        throw new Error('slow_replica must be -1 (none) or a replica index 0..' + (c.replicas - 1));
      }
      if (['round_robin', 'least_conn', 'random'].indexOf(c.policy) < 0) {
        throw new Error('policy must be round_robin, least_conn or random');
      }
    } else if (c.topology === 'cache') {
      share('hit_ratio');
      positive('cache_ms');
      positive('store_ms');
      count('store_workers', 1);
    } else if (c.topology !== 'single') {
      throw new Error('topology must be single, blocking, replicas or cache');
    }
  }

  // A measured shape: [[q, x]...] with q rising from 0 to 1, x finite, >= 0, never falling, and
  // a mean above 0 (it is scaled to the service time's mean).
  function checkShape(shape) {
    if (!Array.isArray(shape) || shape.length < 2) throw new Error('shape must be [[q, x]...] with at least 2 points');
    for (var i = 0; i < shape.length; i++) {
      var p = shape[i];
      if (!Array.isArray(p) || typeof p[0] !== 'number' || typeof p[1] !== 'number' ||
          !isFinite(p[0]) || !isFinite(p[1]) || p[1] < 0) {
        throw new Error('shape point ' + i + ' must be [q, x] with finite numbers, x >= 0');
      }
      if (i > 0 && (p[0] < shape[i - 1][0] || p[1] < shape[i - 1][1])) {
        throw new Error('shape must rise: point ' + i + ' falls below point ' + (i - 1));
      }
    }
    if (shape[0][0] !== 0 || shape[shape.length - 1][0] !== 1) throw new Error('shape must run from q = 0 to q = 1');
    if (!(shapeMean(shape) > 0)) throw new Error('shape must have a mean above 0');
  }

  // The mean service time of one visit to each station, and the share of requests visiting it.
  function stationsOf(c) {
    var s = c.service_ms;
    if (c.topology === 'single') return [{ name: 'server', servers: c.workers, mean: s, visits: 1 }];
    if (c.topology === 'blocking') {
      return [{ name: 'event loop', servers: 1,
                mean: (1 - c.blocking_share) * s + c.blocking_share * c.blocking_ms, visits: 1 }];
    }
    if (c.topology === 'replicas') {
      var out = [];
      for (var i = 0; i < c.replicas; i++) {
        out.push({ name: 'replica ' + (i + 1), servers: c.workers,
                   mean: s * (i === c.slow_replica ? c.slow_factor : 1), visits: 1 / c.replicas });
      }
      return out;
    }
    return [{ name: 'cache', servers: c.workers, mean: c.cache_ms, visits: 1 },
            { name: 'store', servers: c.store_workers, mean: c.store_ms, visits: 1 - c.hit_ratio }];
  }

  function capacity(config) {
    var c = defaults(config);
    check(c);
    var st = stationsOf(c);
    var best = Infinity, name = '', minLatency = c.delay_ms;
    if (c.topology === 'replicas') {
      // Round robin and random give each replica 1/R of the requests, whatever its speed, so
      // the slowest replica caps the whole at R times its rate; least_conn follows the speeds.
      var sum = 0, slowest = Infinity, slowName = '';
      st.forEach(function (x) {
        var mu = 1000 * x.servers / x.mean;
        sum += mu;
        if (mu < slowest) { slowest = mu; slowName = x.name; }
        minLatency += x.mean / st.length;
      });
      if (c.policy === 'least_conn') {
        best = sum;
        name = 'every replica together';
      } else {
        best = st.length * slowest;
        name = st.length > 1 && slowest * st.length < sum ? slowName + ' (the slowest, 1/' + st.length + ' of the requests)' : 'every replica together';
      }
    } else {
      st.forEach(function (x) {
        if (x.visits <= 0) return;
        var bound = 1000 * x.servers / (x.mean * x.visits);
        if (bound < best) { best = bound; name = x.name; }
        minLatency += x.mean * x.visits;
      });
    }
    return { rps: best, bottleneck: name, min_latency_ms: minLatency,
             knee_concurrency: best * minLatency / 1000 };
  }

  // The value at fraction q of a sorted array (nearest rank, as HdrHistogram reports).
  function quantile(sorted, q) {
    if (sorted.length === 0) return null;
    var i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[i];
  }
  function summary(values, n) {
    var a = values.subarray(0, n);
    a.sort();
    var sum = 0;
    for (var i = 0; i < n; i++) sum += a[i];
    return { count: n, mean: n ? sum / n : null, p50: quantile(a, 0.5), p90: quantile(a, 0.9),
             p99: quantile(a, 0.99), p999: quantile(a, 0.999), max: n ? a[n - 1] : null };
  }

  function simulate(config) {
    var c = defaults(config);
    check(c);
    var random = makeRandom(c.seed);
    var shape = c.dist === 'measured' ? c.shape : null;
    if (shape) {
      var m = shapeMean(shape);
      shape = shape.map(function (p) { return [p[0], p[1] / m]; });
    }
    var specs = stationsOf(c);
    var total = c.warmup + c.requests;
    var closed = c.loop === 'closed';
    var slots = closed ? c.concurrency + 1 : Math.min(total, 1 << 16);
    var stations = specs.map(function (x) {
      // stationsOf's mean, but for the event loop under 'blocking': there the blocking requests
      // take blocking_ms (serviceTime) and the others the service time.
      var mean = c.topology === 'blocking' ? c.service_ms : x.mean;
      return new Station(x.name, x.servers, makeSampler(c.dist, mean, shape, random), 64);
    });

    // Requests live in slots, reused once they return; an event's id is its slot, or -1 for
    // the next open-loop arrival.
    var born = new Float64Array(slots);   // arrival time
    var at = new Int32Array(slots);       // station, or -1 when on its way back
    var flag = new Uint8Array(slots);     // blocking: 1 = blocks the loop; cache: 1 = miss
    var measured = new Uint8Array(slots);
    var index = new Int32Array(slots);    // arrival number
    var free = [];
    var used = 0;
    function slot() {
      if (free.length) return free.pop();
      if (used === born.length) {
        var grow = function (a) { var b = new a.constructor(a.length * 2); b.set(a); return b; };
        born = grow(born); at = grow(at); flag = grow(flag); measured = grow(measured);
        index = grow(index);
      }
      return used++;
    }

    var heap = new Heap(1024);
    var latencies = new Float64Array(c.requests);
    // Per class only for the blocking topology (fast and blocking requests).
    var classLat = c.topology === 'blocking' ? [new Float64Array(c.requests), new Float64Array(c.requests)] : null;
    var classN = [0, 0];
    var nLat = 0;
    var arrived = 0;
    var tW = Infinity, tEnd = Infinity;  // the window, set by the arrivals that open and close it
    var inSystem = 0, systemArea = 0, systemLast = 0, inSystemAtW = 0, inSystemAtEnd = 0;
    var completions = 0;  // returns inside the window
    var rr = 0;
    var perClient = closed;

    function clamp(t) { return t < tW ? tW : t > tEnd ? tEnd : t; }
    function account(s, t) {
      var dt = clamp(t) - clamp(s.last);
      if (dt > 0) {
        s.busyArea += s.busy * dt;
        s.queueArea += s.len * dt;
      }
      s.last = t;
    }
    function accountSystem(t) {
      var dt = clamp(t) - clamp(systemLast);
      if (dt > 0) systemArea += inSystem * dt;
      systemLast = t;
    }

    function pick() {
      if (c.topology !== 'replicas') return 0;
      var n = stations.length;
      if (c.policy === 'random') return Math.min(n - 1, Math.floor(random() * n));
      if (c.policy === 'round_robin') {
        var i = rr;
        rr = (rr + 1) % n;
        return i;
      }
      var best = rr, load = Infinity;
      for (var k = 0; k < n; k++) {
        var j = (rr + k) % n;
        var l = stations[j].busy + stations[j].len;
        if (l < load) { load = l; best = j; }
      }
      rr = (best + 1) % n;
      return best;
    }

    function serviceTime(r, s) {
      if (c.topology === 'blocking' && flag[r]) return c.blocking_ms;
      return stations[s].sample();
    }

    function visit(r, s, t) {
      var st = stations[s];
      account(st, t);
      at[r] = s;
      if (measured[r]) st.requests++;
      if (st.busy < st.servers) {
        st.busy++;
        heap.push(t + serviceTime(r, s), r);
      } else {
        st.enqueue(r);
        if (measured[r]) st.waitSum -= t;  // added back when it starts
      }
    }

    function arrive(t) {
      var r = slot();
      var n = arrived++;
      if (n === c.warmup) {
        tW = t;
        systemLast = t;
        inSystemAtW = inSystem;
        stations.forEach(function (s) { s.last = t; });
      }
      if (n === total) {
        tEnd = t;
        accountSystem(t);
        inSystemAtEnd = inSystem;
      }
      accountSystem(t);
      inSystem++;
      born[r] = t;
      index[r] = n;
      measured[r] = n >= c.warmup && n < total ? 1 : 0;
      flag[r] = 0;
      if (c.topology === 'blocking') flag[r] = random() < c.blocking_share ? 1 : 0;
      if (c.topology === 'cache') flag[r] = random() < c.hit_ratio ? 0 : 1;
      visit(r, pick(), t);
    }

    function leave(r, t) {
      var s = at[r];
      var st = stations[s];
      account(st, t);
      if (st.len > 0) {
        var next = st.dequeue();
        if (measured[next]) st.waitSum += t;
        heap.push(t + serviceTime(next, s), next);
      } else {
        st.busy--;
      }
      if (c.topology === 'cache' && s === 0 && flag[r]) {
        visit(r, 1, t);
        return;
      }
      at[r] = -1;
      heap.push(t + c.delay_ms, r);
    }

    function back(r, t) {
      accountSystem(t);
      inSystem--;
      if (t > tW && t <= tEnd) completions++;  // (tW, tEnd]: each edge counted once
      if (measured[r]) {
        var lat = t - born[r];
        latencies[nLat++] = lat;
        if (c.topology === 'blocking') classLat[flag[r]][classN[flag[r]]++] = lat;
      }
      free.push(r);
      if (perClient && arrived <= total) arrive(t);
    }

    if (closed) {
      for (var k = 0; k < c.concurrency && arrived <= total; k++) arrive(0);
    } else {
      heap.push(0, -1);
    }
    var interval = 1000 / c.rate_rps;
    var now = 0;
    while (heap.n > 0) {
      var r = heap.pop();
      now = heap.topT;
      if (r < 0) {
        if (arrived > total) continue;
        arrive(now);
        if (arrived <= total) {
          heap.push(now + (c.arrivals === 'uniform' ? interval : -interval * Math.log(random())), -1);
        }
      } else if (at[r] >= 0) {
        leave(r, now);
      } else {
        back(r, now);
      }
    }
    stations.forEach(function (s) { account(s, tEnd); });
    accountSystem(tEnd);

    var window = tEnd - tW;
    var lat = summary(latencies, nLat);
    var x = window > 0 ? 1000 * completions / window : 0;
    var l = window > 0 ? systemArea / window : 0;
    var result = {
      throughput_rps: x,
      offered_rps: closed ? null : (window > 0 ? 1000 * c.requests / window : 0),
      window_ms: window,
      requests: nLat,
      latency: lat,
      nodes: stations.map(function (s) {
        return {
          name: s.name,
          servers: s.servers,
          utilisation: window > 0 ? s.busyArea / (window * s.servers) : 0,
          mean_queue: window > 0 ? s.queueArea / window : 0,
          mean_in_node: window > 0 ? (s.queueArea + s.busyArea) / window : 0,
          requests: s.requests,
          mean_wait_ms: s.requests ? s.waitSum / s.requests : 0,
        };
      }),
      little: { l: l, x_rps: x, r_ms: lat.mean, x_times_r: x * (lat.mean || 0) / 1000,
                ratio: l > 0 ? x * (lat.mean || 0) / 1000 / l : null },
      // Requests left in the system grew by this many per second of the window: > 0 by more
      // than noise when the offered load exceeds what the stations serve (an unstable queue).
      backlog_growth_rps: window > 0 ? 1000 * (inSystemAtEnd - inSystemAtW) / window : 0,
    };
    if (c.topology === 'blocking') {
      result.classes = { fast: summary(classLat[0], classN[0]), blocking: summary(classLat[1], classN[1]) };
    }
    return result;
  }

  return { simulate: simulate, capacity: capacity, defaults: defaults, makeRandom: makeRandom };
});
