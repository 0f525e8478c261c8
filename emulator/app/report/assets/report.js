// The report's one script: tooltips, the values under the pointer on time charts, the heat
// maps. It reads the JSON blocks the page embeds (script elements of type
// application/json, id "data-" + the chart's id) and never fetches anything. Text is put into the page with textContent
// only, so a hostile pod name stays text.
(function () {
  "use strict";

  // Simulated seconds as the Python side writes them (fmt.fmt_duration).
  function fmt(s) {
    if (s < 0) return "-" + fmt(-s);
    if (s === 0) return "0s";
    if (s < 1) {
      var ms = s * 1000;
      return (ms < 10 ? +ms.toPrecision(3) : Math.round(ms)) + "ms";
    }
    if (s < 60) return (s === Math.floor(s) ? s : +s.toPrecision(3)) + "s";
    var t = Math.round(s), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), x = t % 60;
    function pad(n) { return (n < 10 ? "0" : "") + n; }
    if (h) return h + "h" + pad(m) + "m" + (x ? pad(x) + "s" : "");
    return m + "m" + (x ? pad(x) + "s" : "");
  }

  // --- the tooltip ----------------------------------------------------------------------
  var tip = document.createElement("div");
  tip.id = "tip";
  document.body.appendChild(tip);

  function show(e, lines) {
    tip.textContent = "";
    lines.forEach(function (line) {
      var div = document.createElement("div");
      div.textContent = line;
      tip.appendChild(div);
    });
    tip.style.display = "block";
    var x = e.pageX + 14, w = tip.offsetWidth;
    if (x + w > window.scrollX + document.documentElement.clientWidth) x = e.pageX - w - 14;
    tip.style.left = x + "px";
    tip.style.top = e.pageY + 14 + "px";
  }

  function hide() { tip.style.display = "none"; }

  function data(id) {
    var el = document.getElementById("data-" + id);
    return el ? JSON.parse(el.textContent) : null;
  }

  // Any element with data-tip (markers, bars, Gantt bars): its lines, "\n"-separated.
  document.addEventListener("mousemove", function (e) {
    var target = e.target;
    var el = target && target.closest ? target.closest("[data-tip]") : null;
    if (el) show(e, el.getAttribute("data-tip").split("\n"));
    else if (!(target.closest && target.closest("[data-chart],canvas.heat"))) hide();
  });

  // --- time charts: a crosshair and every series' value at the pointer's time -----------
  // The index of the last sample at or before t (0 when t is before the first).
  function atOrBefore(ts, t) {
    var lo = 0, hi = ts.length - 1;
    if (hi < 0) return -1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (ts[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  function svgX(svg, e) {
    var p = svg.createSVGPoint();
    p.x = e.clientX;
    p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse()).x;
  }

  document.querySelectorAll("rect.hover[data-chart]").forEach(function (area) {
    var d = data(area.getAttribute("data-chart"));
    if (!d) return;
    var svg = area.ownerSVGElement;
    var cross = document.createElementNS("http://www.w3.org/2000/svg", "line");
    cross.setAttribute("class", "cross");
    cross.setAttribute("y1", area.getAttribute("y"));
    cross.setAttribute("y2", +area.getAttribute("y") + +area.getAttribute("height"));
    cross.style.display = "none";
    svg.appendChild(cross);
    area.addEventListener("mousemove", function (e) {
      var x = svgX(svg, e), t = d.x0 + ((x - d.left) / d.w) * (d.x1 - d.x0);
      cross.setAttribute("x1", x);
      cross.setAttribute("x2", x);
      cross.style.display = "";
      var lines = [fmt(t) + " simulated"];
      d.series.forEach(function (s) {
        var i = atOrBefore(d.ts[s.ti], t);
        if (i < 0) return;
        var v = +s.v[i];
        var text = d.pct ? v.toFixed(1) + "%"
          : d.money ? "$" + v.toLocaleString(undefined, {minimumFractionDigits: 2, maximumFractionDigits: 4}) + "/h"
          : v.toLocaleString();
        lines.push(s.name + ": " + text);
      });
      show(e, lines);
    });
    area.addEventListener("mouseleave", function () {
      cross.style.display = "none";
      hide();
    });
  });

  // --- heat maps --------------------------------------------------------------------------
  // Allocation 0..200 (half-percent units) to a light-yellow → orange → dark-red ramp.
  var STOPS = [[0, [255, 255, 229]], [0.25, [254, 217, 118]], [0.5, [253, 141, 60]],
               [0.75, [227, 26, 28]], [1, [128, 0, 38]]];
  var ABSENT = [229, 231, 235];

  function ramp(v) {
    var f = Math.min(v, 200) / 200;
    for (var i = 1; i < STOPS.length; i++) {
      if (f <= STOPS[i][0]) {
        var a = STOPS[i - 1], b = STOPS[i], u = (f - a[0]) / (b[0] - a[0]);
        return [0, 1, 2].map(function (k) { return Math.round(a[1][k] + (b[1][k] - a[1][k]) * u); });
      }
    }
    return STOPS[STOPS.length - 1][1];
  }

  function bytes(b64) {
    var s = atob(b64), out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  function hatchPattern(ctx) {
    var tile = document.createElement("canvas");
    tile.width = 6;
    tile.height = 6;
    var t = tile.getContext("2d");
    t.fillStyle = "#111827";
    t.fillRect(0, 0, 6, 6);
    t.strokeStyle = "#6b7280";
    t.lineWidth = 1.2;
    t.beginPath();
    t.moveTo(0, 6);
    t.lineTo(6, 0);
    t.stroke();
    return ctx.createPattern(tile, "repeat");
  }

  function Heat(canvas) {
    var d = data(canvas.id), n = d.names.length, k = d.edges.length - 1, self = this;
    var rowH = n <= 10 ? 22 : n <= 40 ? 14 : Math.max(1, Math.min(14, 640 / n));
    var left = rowH >= 9 ? 120 : 12, top = 6, w = canvas.width - left - 16;
    var h = Math.max(1, Math.round(n * rowH));
    canvas.height = top + h + 34;
    var x0 = d.edges[0], x1 = d.edges[k] || 1;
    function xAt(t) { return left + ((t - x0) / (x1 - x0 || 1)) * w; }
    var cache = {};
    function rows(res) {
      if (!cache[res]) cache[res] = d.rows[res].map(bytes);
      return cache[res];
    }
    var pods = d.pods ? d.pods.map(bytes) : null;

    this.draw = function (res) {
      self.res = res;
      var ctx = canvas.getContext("2d"), R = rows(res), order = d.order[res];
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      // One pixel per cell on an offscreen canvas, scaled up without smoothing.
      var off = document.createElement("canvas");
      off.width = Math.max(k, 1);
      off.height = Math.max(n, 1);
      var octx = off.getContext("2d"), img = octx.createImageData(off.width, off.height);
      order.forEach(function (node, r) {
        var row = R[node];
        for (var c = 0; c < k; c++) {
          var v = row[c], p = (r * off.width + c) * 4, rgb = v === 255 ? ABSENT : ramp(v);
          img.data[p] = rgb[0];
          img.data[p + 1] = rgb[1];
          img.data[p + 2] = rgb[2];
          img.data[p + 3] = 255;
        }
      });
      octx.putImageData(img, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(off, left, top, w, h);
      // notReady intervals, dark and hatched, over the cells.
      var pattern = hatchPattern(ctx);
      order.forEach(function (node, r) {
        (d.notReady[node] || []).forEach(function (iv) {
          var a = xAt(Math.max(iv[0], x0)), b = xAt(Math.min(iv[1], x1));
          ctx.fillStyle = pattern;
          ctx.globalAlpha = 0.88;
          ctx.fillRect(a, top + r * rowH, Math.max(b - a, 1), Math.max(rowH, 1));
          ctx.globalAlpha = 1;
        });
      });
      // Node names when the rows are tall enough, then the time axis.
      ctx.fillStyle = "#374151";
      ctx.font = "11px system-ui,sans-serif";
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      if (left > 12) {
        order.forEach(function (node, r) {
          var name = d.names[node];
          if (name.length > 17) name = name.slice(0, 16) + "\u2026";
          ctx.fillText(name, left - 6, top + r * rowH + rowH / 2);
        });
      }
      ctx.strokeStyle = "#9ca3af";
      ctx.beginPath();
      ctx.moveTo(left, top + h + 0.5);
      ctx.lineTo(left + w, top + h + 0.5);
      ctx.stroke();
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      d.ticks.forEach(function (tick) {
        var x = Math.round(xAt(tick[0])) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, top + h);
        ctx.lineTo(x, top + h + 4);
        ctx.stroke();
        ctx.fillText(tick[1], x, top + h + 7);
      });
      ctx.fillStyle = "#6b7280";
      ctx.font = "italic 11px system-ui,sans-serif";
      ctx.textAlign = "right";
      ctx.fillText("simulated time", left + w, top + h + 21);
      ctx.textAlign = "left";
      ctx.fillText(n + " nodes, sorted by mean allocation (highest first)", left, top + h + 21);
    };

    canvas.addEventListener("mousemove", function (e) {
      var box = canvas.getBoundingClientRect();
      var x = (e.clientX - box.left) * (canvas.width / box.width);
      var y = (e.clientY - box.top) * (canvas.height / box.height);
      var r = Math.floor((y - top) / rowH), c = Math.floor(((x - left) / w) * k);
      if (r < 0 || r >= n || c < 0 || c >= k) { hide(); return; }
      var node = d.order[self.res][r], v = rows(self.res)[node][c];
      var lines = [d.names[node], fmt(d.edges[c]) + " \u2013 " + fmt(d.edges[c + 1])];
      lines.push(v === 255 ? "node absent" : self.res + ": " + (v / 2).toFixed(1) + "% allocated");
      if (pods) {
        var count = pods[node][c];
        lines.push("pods at bucket end: " + (count === 255 ? "255+" : count));
      }
      (d.notReady[node] || []).forEach(function (iv) {
        if (iv[0] < d.edges[c + 1] && iv[1] > d.edges[c]) {
          lines.push("not Ready " + fmt(iv[0]) + " \u2013 " + fmt(iv[1]));
        }
      });
      show(e, lines);
    });
    canvas.addEventListener("mouseleave", hide);
    this.draw(d.resources[0]);
  }

  var heats = {};
  document.querySelectorAll("canvas.heat").forEach(function (c) { heats[c.id] = new Heat(c); });
  document.querySelectorAll("button.res").forEach(function (button) {
    button.addEventListener("click", function () {
      var id = button.getAttribute("data-heat");
      document.querySelectorAll('button.res[data-heat="' + id + '"]').forEach(function (other) {
        other.classList.toggle("on", other === button);
      });
      heats[id].draw(button.getAttribute("data-res"));
    });
  });
})();
