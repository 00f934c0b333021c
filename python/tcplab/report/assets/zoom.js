
document.addEventListener('click', function (ev) {
  var img = ev.target.closest ? ev.target.closest('figure img') : null;
  if (!img) return;
  img.parentNode.classList.toggle('zoomed');
});
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  function niceStep(span, n) {
    var raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
  }
  function decimals(step) {
    for (var d = 0; d < 12; d++) {
      var s = step * Math.pow(10, d);
      if (Math.abs(s - Math.round(s)) < 1e-6 * Math.max(1, s)) return d;
    }
    return 12;
  }
  function label(v, d) { return v.toFixed(d).replace('-', '\u2212'); }
  function num(x) { return Math.round(x * 1000) / 1000; }

  function setup(fig) {
    var meta = JSON.parse(fig.getAttribute('data-zoom'));
    var svg = fig.querySelector('svg.zsvg'), uid = meta.uid;
    var first = meta.axes[0], T0 = first.t0, T1 = first.t1, cur = [T0, T1];
    var defs = svg.querySelector('defs') || svg.insertBefore(document.createElementNS(NS, 'defs'), svg.firstChild);
    var axes = meta.axes.map(function (m, i) {
      var g = svg.querySelector('#' + uid + '-' + m.g);
      var ax = {m: m, paths: [], uses: [], texts: [], groups: [], ticks: [], made: [], tpl: null,
                clip: uid + '-zclip' + i};
      if (!g) return ax;
      var cp = document.createElementNS(NS, 'clipPath'), rc = document.createElementNS(NS, 'rect');
      cp.setAttribute('id', ax.clip);
      rc.setAttribute('x', m.x0 - 0.5); rc.setAttribute('y', 0);
      rc.setAttribute('width', m.x1 - m.x0 + 1); rc.setAttribute('height', meta.h);
      cp.appendChild(rc); defs.appendChild(cp);
      g.querySelectorAll('[id^="' + uid + '-zx"]').forEach(function (z) {
        ax.groups.push(z);
        z.querySelectorAll('path').forEach(function (p) {
          if (p.closest('defs')) return;
          var tok = p.getAttribute('d').trim().split(/\s+/), xi = [], xs = [], k = 0;
          for (var j = 0; j < tok.length; j++) {
            if (/^[A-Za-z]$/.test(tok[j])) continue;
            if (k++ % 2 === 0) { xi.push(j); xs.push(parseFloat(tok[j])); }
          }
          ax.paths.push({el: p, tok: tok, xi: xi, xs: xs});
        });
        z.querySelectorAll('use').forEach(function (u) {
          if (u.closest('defs')) return;
          ax.uses.push({el: u, x: parseFloat(u.getAttribute('x') || '0')});
        });
        z.querySelectorAll('text').forEach(function (t) {
          var tr = t.getAttribute('transform') || '', x = parseFloat(t.getAttribute('x'));
          if (isNaN(x)) { var mm = /translate\(\s*([-\d.eE]+)/.exec(tr); x = mm ? parseFloat(mm[1]) : m.x0; }
          ax.texts.push({el: t, x: x, tr: tr});
        });
      });
      g.querySelectorAll('[id^="' + uid + '-xtick_"]').forEach(function (t) {
        var u = t.querySelector('use');
        ax.ticks.push({el: t, x: u ? parseFloat(u.getAttribute('x')) : NaN});
      });
      ax.hide = Array.prototype.slice.call(g.querySelectorAll('[id^="' + uid + '-zh"]'));
      if (ax.ticks.length) ax.tpl = ax.ticks[ax.ticks.length > 1 ? 1 : 0];
      return ax;
    });
    var ntarget = Math.max(4, Math.min(10, axes[0].ticks.length || 8));

    function render(a, b) {
      var full = (a === T0 && b === T1);
      cur = [a, b];
      axes.forEach(function (ax) {
        var m = ax.m, W = m.x1 - m.x0;
        var k = (m.t1 - m.t0) / (b - a), xa = m.x0 + (a - m.t0) / (m.t1 - m.t0) * W;
        var X = function (x) { return m.x0 + (x - xa) * k; };
        ax.paths.forEach(function (p) {
          var t = p.tok.slice();
          for (var j = 0; j < p.xi.length; j++) t[p.xi[j]] = full ? p.tok[p.xi[j]] : num(X(p.xs[j]));
          p.el.setAttribute('d', t.join(' '));
        });
        ax.uses.forEach(function (u) { u.el.setAttribute('x', full ? u.x : num(X(u.x))); });
        ax.texts.forEach(function (t) {
          var dx = full ? 0 : num(X(t.x) - t.x);
          t.el.setAttribute('transform', ('translate(' + dx + ' 0) ' + t.tr).trim());
        });
        ax.groups.forEach(function (g) {
          if (full) g.removeAttribute('clip-path'); else g.setAttribute('clip-path', 'url(#' + ax.clip + ')');
        });
        (ax.hide || []).forEach(function (e) { e.style.display = full ? '' : 'none'; });
        ax.made.forEach(function (e) { e.parentNode.removeChild(e); });
        ax.made = [];
        ax.ticks.forEach(function (t) { t.el.style.display = full ? '' : 'none'; });
        if (full || !ax.tpl || isNaN(ax.tpl.x)) return;
        var step = niceStep(b - a, ntarget), d = decimals(step);
        for (var i = Math.ceil(a / step - 1e-9); i * step <= b + step * 1e-9; i++) {
          var v = i * step, px = m.x0 + (v - a) / (b - a) * W;
          var c = ax.tpl.el.cloneNode(true);
          c.removeAttribute('id');
          c.style.display = '';
          c.querySelectorAll('defs').forEach(function (e) { e.parentNode.removeChild(e); });
          c.querySelectorAll('[id]').forEach(function (e) { e.removeAttribute('id'); });
          c.setAttribute('transform', 'translate(' + num(px - ax.tpl.x) + ' 0)');
          c.setAttribute('class', 'ztick');
          c.setAttribute('data-t', label(v, d));
          var txt = c.querySelector('text');
          if (txt) txt.textContent = label(v, d);
          ax.tpl.el.parentNode.insertBefore(c, ax.tpl.el);
          ax.made.push(c);
        }
      });
      fig.setAttribute('data-t0', String(a));
      fig.setAttribute('data-t1', String(b));
      var span = b - a, d2 = Math.min(6, Math.max(0, decimals(niceStep(span, 50))));
      fig.querySelector('.zrange').textContent = full ? 'whole run: ' + label(a, d2) + ' \u2013 ' + label(b, d2) + ' s'
        : 'showing ' + label(a, d2) + ' \u2013 ' + label(b, d2) + ' s';
      fig.querySelector('.zreset').disabled = full;
      fig.querySelector('.zout').disabled = full;
      fig.querySelector('.zleft').disabled = full || a <= T0;
      fig.querySelector('.zright').disabled = full || b >= T1;
    }
    function zoom(a, b) {
      var full = T1 - T0, span = Math.max(Math.min(b - a, full), full / 5000);
      if (span >= full * (1 - 1e-9)) return render(T0, T1);
      var mid = (a + b) / 2;
      a = mid - span / 2; b = mid + span / 2;
      if (a < T0) { b += T0 - a; a = T0; }
      if (b > T1) { a -= b - T1; b = T1; }
      render(a, b);
    }
    function svgX(ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    function tAt(x) {
      var m = first, f = Math.min(1, Math.max(0, (x - m.x0) / (m.x1 - m.x0)));
      return cur[0] + f * (cur[1] - cur[0]);
    }
    var sel = document.createElementNS(NS, 'rect'), start = null;
    var ytop = Math.min.apply(null, meta.axes.map(function (m) { return m.y0; }));
    var ybot = Math.max.apply(null, meta.axes.map(function (m) { return m.y1; }));
    sel.setAttribute('y', ytop); sel.setAttribute('height', ybot - ytop);
    sel.setAttribute('style', 'fill: rgba(31,95,168,.15); stroke: #1f5fa8; stroke-width: .6; pointer-events: none');
    sel.setAttribute('display', 'none');
    svg.appendChild(sel);
    function clampX(x) { return Math.min(first.x1, Math.max(first.x0, x)); }
    svg.addEventListener('pointerdown', function (ev) {
      if (ev.button !== 0) return;
      start = {x: clampX(svgX(ev)), cx: ev.clientX};
      try { svg.setPointerCapture(ev.pointerId); } catch (e) { /* synthetic events */ }
      ev.preventDefault();
    });
    svg.addEventListener('pointermove', function (ev) {
      if (!start) return;
      var x = clampX(svgX(ev));
      sel.setAttribute('x', Math.min(x, start.x)); sel.setAttribute('width', Math.abs(x - start.x));
      sel.setAttribute('display', Math.abs(ev.clientX - start.cx) >= 4 ? 'inline' : 'none');
    });
    function end(ev, cancel) {
      if (!start) return;
      var s = start; start = null;
      sel.setAttribute('display', 'none');
      if (cancel) return;
      if (Math.abs(ev.clientX - s.cx) < 4) { fig.classList.toggle('zoomed'); return; }
      var x = clampX(svgX(ev)), ta = tAt(Math.min(x, s.x)), tb = tAt(Math.max(x, s.x));
      if (tb > ta) zoom(ta, tb);
    }
    svg.addEventListener('pointerup', function (ev) { end(ev, false); });
    svg.addEventListener('pointercancel', function (ev) { end(ev, true); });
    fig.querySelector('.zreset').addEventListener('click', function () { render(T0, T1); });
    fig.querySelector('.zout').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] - s / 2, cur[1] + s / 2);
    });
    fig.querySelector('.zleft').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] - s / 2, cur[1] - s / 2);
    });
    fig.querySelector('.zright').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] + s / 2, cur[1] + s / 2);
    });
    fig.zoomTo = zoom;
    render(T0, T1);
  }
  document.querySelectorAll('figure.zfig[data-zoom]').forEach(function (f) {
    try { setup(f); } catch (e) { f.classList.add('zbroken'); if (window.console) console.warn('zoom disabled', e); }
  });
})();
