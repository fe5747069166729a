// Tabula's web console: one page, plain JavaScript, no library. It reads the node's JSON
// routes (/tabula/nodes, /tabula/tables, /tabula/tablets, /tabula/keyviz, /tabula/operations)
// and redraws the page shown every few seconds.
(function () {
  'use strict';
  var REFRESH_MS = 5000;
  var page = document.getElementById('page');
  var hover = document.getElementById('hover');
  var timer = null;
  // Bumped at every page change: a load that ends after the page changed neither draws nor schedules.
  var generation = 0;
  var kvMetric = 'writes';
  var METRICS = { reads: 'rows read /s', writes: 'rows written /s', bytesRead: 'bytes read /s', bytesWritten: 'bytes written /s' };

  // A node with authentication answers 401 without a token: the console asks for one and keeps it for the
  // browser tab's session (sessionStorage: gone when the tab closes), sending it as a bearer token.
  var TOKEN_KEY = 'tabula.token';

  function headers() {
    var h = { Accept: 'application/json' };
    var token = sessionStorage.getItem(TOKEN_KEY);
    if (token) { h.Authorization = 'Bearer ' + token; }
    return h;
  }

  function get(path) {
    return fetch(path, { headers: headers() }).then(function (r) {
      if (r.status === 401) { login(); throw new Error('sign in to see this node'); }
      return r.json().then(function (body) {
        if (!r.ok) { throw new Error(body.error || (r.status + ' ' + r.statusText)); }
        return body;
      });
    });
  }

  function login() {
    if (document.getElementById('login')) { return; }
    clearTimeout(timer);
    generation++; // the page waits for the token rather than asking again every few seconds
    var form = document.createElement('form');
    form.id = 'login';
    form.className = 'login';
    form.innerHTML = '<p>This node asks who you are. Paste a token (kept for this tab only).</p>'
      + '<input id="token" type="password" autocomplete="off" placeholder="token" size="40">'
      + ' <button type="submit">Sign in</button>'
      + (sessionStorage.getItem(TOKEN_KEY) ? ' <span class="badge down">the token was refused</span>' : '');
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
      form.remove();
      route();
    });
    document.body.insertBefore(form, document.body.firstChild.nextSibling);
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function num(n) {
    if (n >= 1e9) { return (n / 1e9).toFixed(1) + ' G'; }
    if (n >= 1e6) { return (n / 1e6).toFixed(1) + ' M'; }
    if (n >= 1e4) { return (n / 1e3).toFixed(1) + ' k'; }
    return String(Math.round(n * 10) / 10);
  }

  function bytes(n) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }

  function key(k) { return k === '' ? '(start)' : k; }
  function endKey(k) { return k === '' ? '(end)' : k; }

  /** Shows {@code html} as the page unless the page changed since the load began; says whether it did. */
  function paint(mine, html) {
    if (mine !== generation) { return false; }
    page.innerHTML = html;
    return true;
  }

  function fail(err) {
    page.innerHTML = '<p class="badge down">Could not load: ' + esc(err.message) + '</p>';
  }

  // ---- cluster

  function cluster(mine) {
    return Promise.all([get('/tabula/nodes'), get('/tabula/operations').catch(function () { return { master: '' }; })])
      .then(function (r) {
        var nodes = r[0];
        var master = r[1].master;
        var tablets = nodes.reduce(function (a, n) { return a + n.tablets; }, 0);
        var ops = nodes.reduce(function (a, n) { return a + n.opsPerSecond; }, 0);
        var hottest = nodes.slice().sort(function (a, b) { return b.opsPerSecond - a.opsPerSecond; })[0];
        var html = '<h1>Cluster</h1><div class="cards">' +
          card('Nodes', nodes.length, 'card-nodes') + card('Tablets', tablets, 'card-tablets') +
          card('Rows /s', num(ops), 'card-ops') +
          card('Hottest node', hottest ? esc(hottest.name) : '-', 'card-hottest') + '</div>' +
          '<table class="grid" id="nodes"><thead><tr><th>Node</th><th>State</th><th>Cluster address</th>' +
          '<th>gRPC</th><th>HTTP</th><th>Tablets</th><th>Rows /s</th></tr></thead><tbody>';
        nodes.forEach(function (n) {
          html += '<tr class="node" data-node="' + esc(n.name) + '"><td>' + esc(n.name) +
            (n.address === master ? '<span class="badge master" title="the master runs here">master</span>' : '') +
            '</td><td><span class="badge ' + esc(n.state) + '">' + esc(n.state) + '</span></td><td>' +
            esc(n.address) + '</td><td>' + esc(n.grpc) + '</td><td>' +
            (n.http ? '<a href="http://' + esc(n.http) + '/console/">' + esc(n.http) + '</a>' : '') +
            '</td><td class="num tablets">' + n.tablets + '</td><td class="num">' + num(n.opsPerSecond) + '</td></tr>';
        });
        paint(mine, html + '</tbody></table>');
      });
  }

  function card(title, value, id) {
    return '<div class="card" id="' + id + '"><div class="muted">' + title + '</div><div class="value">' + value +
      '</div></div>';
  }

  // ---- tables

  function tables(mine) {
    return get('/tabula/tables').then(function (list) {
      var html = '<h1>Tables</h1><table class="grid" id="tables"><thead><tr><th>Table</th><th>Column families ' +
        '(GC policy)</th><th>Tablets</th><th>Nodes</th><th>Size</th><th>Rows /s</th><th></th></tr></thead><tbody>';
      list.forEach(function (t) {
        var fams = Object.keys(t.families).map(function (f) { return esc(f) + ' (' + esc(t.families[f]) + ')'; });
        html += '<tr class="table-row" data-table="' + esc(t.name) + '"><td><a href="#/table/' +
          encodeURIComponent(t.name) + '">' + esc(t.name) + '</a></td><td>' + fams.join(', ') +
          '</td><td class="num tablets">' + t.tablets + '</td><td class="num">' + t.nodes + '</td><td class="num">' +
          bytes(t.bytes) + '</td><td class="num">' + num(t.opsPerSecond) + '</td><td><a href="#/keyviz/' +
          encodeURIComponent(t.name) + '">Key Visualizer</a></td></tr>';
      });
      if (list.length === 0) { html += '<tr><td colspan="7" class="muted">No tables yet.</td></tr>'; }
      paint(mine, html + '</tbody></table>');
    });
  }

  function table(name, mine) {
    return get('/tabula/tablets?table=' + encodeURIComponent(name)).then(function (list) {
      var html = '<h1>Table ' + esc(name) + '</h1><p><a href="#/keyviz/' + encodeURIComponent(name) +
        '">Key Visualizer</a> · ' + list.length + ' tablets</p><table class="grid" id="tablets"><thead><tr>' +
        '<th>Tablet</th><th>Start row</th><th>End row</th><th>Owner</th><th>State</th><th>Files</th><th>Size</th>' +
        '<th>Rows /s</th></tr></thead><tbody>';
      list.forEach(function (t) {
        html += '<tr class="tablet" data-tablet="' + esc(t.id) + '"><td>' + esc(t.id) + '</td><td>' + esc(key(t.start)) +
          '</td><td>' + esc(endKey(t.end)) + '</td><td class="owner">' + esc(t.owner) + '</td><td><span class="badge ' +
          esc(t.state) + '">' + esc(t.state) + (t.to ? ' → ' + esc(t.to) : '') + '</span></td><td class="num">' +
          t.files + '</td><td class="num">' + bytes(t.bytes) + '</td><td class="num">' + num(t.opsPerSecond) +
          '</td></tr>';
      });
      paint(mine, html + '</tbody></table>');
    });
  }

  // ---- operations

  function operations(mine) {
    return get('/tabula/operations').then(function (r) {
      var html = '<h1>Recent operations</h1><p class="muted">Splits, moves, merges and recoveries the master ' +
        'recorded since it started, newest first.</p><table class="grid" id="operations"><thead><tr><th>When</th>' +
        '<th>What</th><th>Table</th><th>Tablet</th><th>Detail</th></tr></thead><tbody>';
      r.operations.slice().reverse().forEach(function (o) {
        html += '<tr class="operation" data-kind="' + esc(o.kind) + '"><td>' + new Date(o.millis).toLocaleTimeString() +
          '</td><td>' + esc(o.kind) + '</td><td>' + esc(o.table) + '</td><td>' + esc(o.tablet) + '</td><td>' +
          esc(o.detail) + '</td></tr>';
      });
      if (r.operations.length === 0) { html += '<tr><td colspan="5" class="muted">None yet.</td></tr>'; }
      paint(mine, html + '</tbody></table>');
    });
  }

  // ---- key visualizer

  // Dark (no load) to bright (the most load in view), on a log scale.
  var STOPS = [[0, 0, 4], [40, 11, 84], [101, 21, 110], [159, 42, 99], [212, 72, 66], [245, 125, 21],
    [250, 193, 39], [252, 255, 164]];

  function colour(t) {
    var x = Math.max(0, Math.min(1, t)) * (STOPS.length - 1);
    var i = Math.min(STOPS.length - 2, Math.floor(x));
    var f = x - i;
    return STOPS[i].map(function (c, j) { return Math.round(c + (STOPS[i + 1][j] - c) * f); });
  }

  function keyViz(name, mine) {
    return get('/tabula/keyviz?table=' + encodeURIComponent(name)).then(function (kv) {
      window.tabulaKeyViz = kv;
      var cols = kv.columns.length;
      var bands = kv.bands.length;
      var cellW = Math.max(4, Math.floor(840 / Math.max(1, cols)));
      var cellH = Math.max(3, Math.floor(480 / Math.max(1, bands)));
      var html = '<h1>Key Visualizer: ' + esc(name) + '</h1><div class="kv-controls"><label>Colour by ' +
        '<select id="kv-metric">';
      Object.keys(METRICS).forEach(function (m) {
        html += '<option value="' + m + '"' + (m === kvMetric ? ' selected' : '') + '>' + METRICS[m] + '</option>';
      });
      html += '</select></label><span class="legend">0 <canvas id="kv-legend" width="120" height="10"></canvas> ' +
        '<span id="kv-max"></span></span><span class="muted">rows: key ranges in key order; columns: ' +
        (kv.columnMillis / 1000) + ' s each, newest right</span></div>' +
        '<div class="kv-wrap"><div id="kv-keys" style="height:' + bands * cellH + 'px"></div>' +
        '<canvas id="heatmap" width="' + cols * cellW + '" height="' + bands * cellH + '" data-cell-width="' + cellW +
        '" data-cell-height="' + cellH + '" data-bands="' + bands + '" data-columns="' + cols + '"></canvas></div>' +
        '<div id="kv-times" style="width:' + cols * cellW + 'px"></div>';
      if (!paint(mine, html)) { return; }
      document.getElementById('kv-metric').addEventListener('change', function (e) {
        kvMetric = e.target.value;
        draw(kv, cellW, cellH);
      });
      var keys = document.getElementById('kv-keys');
      var every = Math.max(1, Math.ceil(14 / cellH));
      kv.bands.forEach(function (b, i) {
        if (i % every === 0) {
          var d = document.createElement('div');
          d.style.top = (i * cellH) + 'px';
          d.textContent = key(b.start);
          d.title = key(b.start) + ' … ' + endKey(b.end);
          keys.appendChild(d);
        }
      });
      if (cols > 0) {
        document.getElementById('kv-times').innerHTML = '<span>' + new Date(kv.columns[0]).toLocaleTimeString() +
          '</span><span>' + new Date(kv.columns[cols - 1]).toLocaleTimeString() + '</span>';
      }
      draw(kv, cellW, cellH);
      var canvas = document.getElementById('heatmap');
      canvas.addEventListener('mousemove', function (e) {
        var r = canvas.getBoundingClientRect();
        var c = Math.floor((e.clientX - r.left) / cellW);
        var b = Math.floor((e.clientY - r.top) / cellH);
        if (c < 0 || c >= cols || b < 0 || b >= bands) { hover.hidden = true; return; }
        var at = c * bands + b;
        var t = kv.tabletAt[at];
        hover.innerHTML = '<b>' + esc(key(kv.bands[b].start)) + ' … ' + esc(endKey(kv.bands[b].end)) + '</b><br>' +
          num(kv.metrics[kvMetric][at]) + ' ' + METRICS[kvMetric] + '<br>tablet ' + (t >= 0 ? esc(kv.tablets[t]) : '-') +
          ' · ' + new Date(kv.columns[c]).toLocaleTimeString();
        hover.style.left = (e.clientX + 14) + 'px';
        hover.style.top = (e.clientY + 14) + 'px';
        hover.hidden = false;
      });
      canvas.addEventListener('mouseleave', function () { hover.hidden = true; });
    });
  }

  function draw(kv, cellW, cellH) {
    var canvas = document.getElementById('heatmap');
    var ctx = canvas.getContext('2d');
    var values = kv.metrics[kvMetric];
    var max = 0;
    values.forEach(function (v) { if (v > max) { max = v; } });
    var cols = kv.columns.length;
    var bands = kv.bands.length;
    var img = ctx.createImageData(Math.max(1, cols * cellW), Math.max(1, bands * cellH));
    for (var c = 0; c < cols; c++) {
      for (var b = 0; b < bands; b++) {
        var v = values[c * bands + b];
        var rgb = colour(max > 0 ? Math.log1p(v) / Math.log1p(max) : 0);
        for (var y = b * cellH; y < (b + 1) * cellH; y++) {
          for (var x = c * cellW; x < (c + 1) * cellW; x++) {
            var p = (y * cols * cellW + x) * 4;
            img.data[p] = rgb[0]; img.data[p + 1] = rgb[1]; img.data[p + 2] = rgb[2]; img.data[p + 3] = 255;
          }
        }
      }
    }
    ctx.putImageData(img, 0, 0);
    var legend = document.getElementById('kv-legend').getContext('2d');
    for (var i = 0; i < 120; i++) {
      var l = colour(i / 119);
      legend.fillStyle = 'rgb(' + l.join(',') + ')';
      legend.fillRect(i, 0, 1, 10);
    }
    document.getElementById('kv-max').textContent = num(max) + ' ' + METRICS[kvMetric];
  }

  // ---- routing

  function route() {
    var hash = location.hash || '#/cluster';
    var parts = hash.substring(2).split('/');
    var name = parts.length > 1 ? decodeURIComponent(parts.slice(1).join('/')) : '';
    document.querySelectorAll('header nav a').forEach(function (a) {
      a.classList.toggle('active', a.getAttribute('data-page') === parts[0] ||
        (a.getAttribute('data-page') === 'tables' && (parts[0] === 'table' || parts[0] === 'keyviz')));
    });
    var show = { cluster: cluster, tables: tables, operations: operations,
      table: function (m) { return table(name, m); }, keyviz: function (m) { return keyViz(name, m); } }[parts[0]] ||
      cluster;
    clearTimeout(timer);
    var mine = ++generation;
    var run = function () {
      show(mine).catch(function (err) {
        if (mine === generation) { fail(err); }
      }).then(function () {
        if (mine !== generation) { return; }
        document.body.setAttribute('data-loaded', hash);
        timer = setTimeout(run, REFRESH_MS);
      });
    };
    hover.hidden = true;
    run();
  }

  document.getElementById('served-by').textContent = 'served by ' + location.host;
  window.addEventListener('hashchange', route);
  route();
}());
