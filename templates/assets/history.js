// The interactive history chart of a benchmark page, drawn with the vendored uPlot
// (assets/vendor/uplot, MIT, see its LICENSE) from the JSON in #history-data
// (reports/src/html/chart_data.rs). It replaces the static SVG, which stays the chart without
// JavaScript. Drag to zoom, shift-drag to pan, double-click or "reset zoom" to see every run;
// hovering a point shows its commit, run, median and interval; other testbeds' or branches'
// series of the benchmark can be overlaid with a checkbox each. Text from the data is only ever
// set with textContent. Loads nothing: runs from file://.
(function () {
  "use strict";
  var dataEl = document.getElementById("history-data");
  var live = document.getElementById("history-live");
  var plot = document.getElementById("history-plot");
  var tip = document.getElementById("history-tip");
  if (!dataEl || !live || !plot || typeof uPlot === "undefined") { return; }
  var d = JSON.parse(dataEl.textContent);
  // The points come a column per field; one object per point from here on.
  var P = d.points;
  d.points = P.median.map(function (median, i) {
    return {
      commit: P.commit[i], subject: P.subject[i], run: P.run[i], median: median,
      ci: P.ci_lo[i] == null ? null : [P.ci_lo[i], P.ci_hi[i]], min: P.min[i], max: P.max[i],
      median_text: P.median_text[i], ci_text: P.ci_text[i], n: P.n[i], throttled: P.throttled[i]
    };
  });
  if (!d.points.length) { return; }

  // One row per x: a clean point (x: its index in commit order), a contended or excluded
  // point (x: between the clean points around it), and the overlays' points at that x (at the
  // same commit's x, or between). x strictly increasing, as uPlot needs.
  var overlays = d.overlays || [];
  var byX = new Map();
  function rowAt(x) {
    var r = byX.get(x);
    if (!r) { r = { x: x, o: {} }; byX.set(x, r); }
    return r;
  }
  d.points.forEach(function (p, i) { rowAt(i).p = p; });
  d.apart.forEach(function (a) {
    var x = a.x;
    while (byX.has(x) && byX.get(x).a) { x += 0.01; }
    rowAt(x).a = a;
  });
  overlays.forEach(function (o, k) {
    o.x.forEach(function (x, j) { rowAt(x).o[k] = j; });
  });
  var rows = Array.from(byX.values()).sort(function (a, b) { return a.x - b.x; });
  function col(f) { return rows.map(function (r) { return r.p ? f(r.p) : null; }); }
  var data = [
    rows.map(function (r) { return r.x; }),
    col(function (p) { return p.max; }),
    col(function (p) { return p.min; }),
    col(function (p) { return p.ci ? p.ci[1] : p.median; }),
    col(function (p) { return p.ci ? p.ci[0] : p.median; }),
    col(function (p) { return p.median; }),
    rows.map(function (r) { return r.a ? r.a.median : null; }),
    col(function (p) { return p.throttled ? p.median : null; })
  ];
  var FIRST_OVERLAY = data.length;
  overlays.forEach(function (o, k) {
    data.push(rows.map(function (r) { return r.o[k] == null ? null : o.median[r.o[k]]; }));
  });
  var full = { min: data[0][0] - 0.5, max: data[0][data[0].length - 1] + 0.5 };

  function record(u) {
    plot.setAttribute("data-x-min", String(u.scales.x.min));
    plot.setAttribute("data-x-max", String(u.scales.x.max));
  }

  // Change points (dashed, red or green, half-way between their two points) and alerts
  // (dotted, purple, at the first bad point) as vertical lines, each with its short label.
  function drawMarks(u) {
    var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
    ctx.save();
    ctx.lineWidth = 1.5 * uPlot.pxRatio;
    ctx.font = (11 * uPlot.pxRatio) + "px system-ui, sans-serif";
    function line(m, color, dash, row) {
      var x = Math.round(u.valToPos(m.x, "x", true));
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) { return; }
      ctx.strokeStyle = color;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      ctx.fillStyle = color;
      ctx.fillText(m.short, x + 3 * uPlot.pxRatio, top + (row + 1) * 12 * uPlot.pxRatio);
    }
    d.changes.forEach(function (m) { line(m, m["class"] === "worse" ? "#c62828" : "#2e7d32", [6, 4], 0); });
    d.alerts.forEach(function (m) { line(m, "#7c3aed", [2, 3], 1); });
    ctx.restore();
  }

  // What a point's tooltip says: its commit, run, median and interval, and the marks beside it.
  function describe(r) {
    var lines = [];
    var p = r.p || r.a;
    if (p) {
      lines.push(p.commit + (p.subject ? " " + p.subject : ""));
      lines.push("run " + p.run);
      lines.push("median " + p.median_text + " " + d.unit);
    }
    if (r.p) {
      lines.push("95% CI " + r.p.ci_text + " " + d.unit);
      lines.push("n=" + r.p.n + (r.p.throttled ? ", " + r.p.throttled + " throttled" : ""));
    } else if (r.a) {
      lines.push(r.a.why + " (left out of change detection)");
    }
    overlays.forEach(function (o, k) {
      var j = r.o[k];
      if (j == null || !u.series[FIRST_OVERLAY + k].show) { return; }
      lines.push(o.label + ": " + o.commit[j] + ", run " + o.run[j] + ", median " +
        o.median_text[j] + " " + d.unit);
    });
    d.changes.concat(d.alerts).forEach(function (m) {
      if (Math.abs(m.x - r.x) <= 0.5) { lines.push(m.label); }
    });
    return lines.join("\n");
  }

  function showTip(u) {
    var idx = u.cursor.idx;
    if (idx == null || u.cursor.left < 0) { tip.hidden = true; return; }
    var text = describe(rows[idx]);
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    var left = u.over.offsetLeft + u.valToPos(data[0][idx], "x") + 12;
    if (left + tip.offsetWidth > live.clientWidth) { left -= tip.offsetWidth + 24; }
    tip.style.left = left + "px";
    tip.style.top = (plot.offsetTop + u.over.offsetTop + u.cursor.top + 12) + "px";
  }

  // Shift-drag pans: the x range moves with the mouse; a plain drag is uPlot's zoom.
  function panFrom(u, e) {
    var x0 = e.clientX, min0 = u.scales.x.min, max0 = u.scales.x.max;
    var perPx = (max0 - min0) / u.over.clientWidth;
    function move(ev) {
      var dx = (ev.clientX - x0) * perPx;
      u.setScale("x", { min: min0 - dx, max: max0 - dx });
    }
    function up() {
      document.removeEventListener("mousemove", move);
      document.removeEventListener("mouseup", up);
    }
    document.addEventListener("mousemove", move);
    document.addEventListener("mouseup", up);
  }

  var grey = "#6b7280";
  var OVERLAY_COLORS = ["#d97706", "#059669", "#db2777", "#4b5563", "#0891b2", "#65a30d"];
  var opts = {
    width: Math.min(live.clientWidth || 960, 1000),
    height: 360,
    legend: { show: false },
    scales: { x: { time: false } },
    cursor: {
      drag: { x: true, y: false, setScale: true },
      bind: {
        mousedown: function (u, targ, handler) {
          return function (e) {
            if (e.shiftKey) { panFrom(u, e); return null; }
            return handler(e);
          };
        },
        dblclick: function (u) {
          return function () { u.setScale("x", full); return null; };
        }
      }
    },
    axes: [
      {
        space: 90,
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
        values: function (u, splits) {
          return splits.map(function (v) {
            return Number.isInteger(v) && d.points[v] ? d.points[v].commit : "";
          });
        }
      },
      { label: d.unit, size: 70 }
    ],
    series: [
      {},
      { label: "max", stroke: "#dbeafe", spanGaps: true, points: { show: false } },
      { label: "min", stroke: "#dbeafe", spanGaps: true, points: { show: false } },
      { label: "ci high", stroke: "#93c5fd", spanGaps: true, points: { show: false } },
      { label: "ci low", stroke: "#93c5fd", spanGaps: true, points: { show: false } },
      { label: "median", stroke: "#0b57d0", width: 1.5, spanGaps: true,
        points: { show: true, size: 6, fill: "#0b57d0" } },
      { label: "set apart", stroke: grey, paths: function () { return null; },
        points: { show: true, size: 9, width: 1.5, fill: "#d1d5db", stroke: grey } },
      { label: "throttled", stroke: "#7c4a00", paths: function () { return null; },
        points: { show: true, size: 8, fill: "#f59e0b", stroke: "#7c4a00" } }
    ].concat(overlays.map(function (o, k) {
      var color = OVERLAY_COLORS[k % OVERLAY_COLORS.length];
      return { label: o.label, stroke: color, width: 1.5, spanGaps: true, show: false,
        points: { show: true, size: 5, fill: color } };
    })),
    bands: [
      { series: [1, 2], fill: "rgba(219,234,254,0.6)" },
      { series: [3, 4], fill: "rgba(147,197,253,0.6)" }
    ],
    hooks: {
      draw: [drawMarks],
      setCursor: [showTip],
      setScale: [function (u, key) { if (key === "x") { record(u); } }],
      ready: [record]
    }
  };
  var u = new uPlot(opts, data, plot);
  // A checkbox per overlay: another testbed's or branch's series of this benchmark.
  var picker = document.getElementById("history-overlays");
  if (picker && overlays.length) {
    picker.appendChild(document.createTextNode("Overlay: "));
    overlays.forEach(function (o, k) {
      var label = document.createElement("label");
      var box = document.createElement("input");
      box.type = "checkbox";
      box.setAttribute("data-overlay", String(k));
      box.addEventListener("change", function () {
        u.setSeries(FIRST_OVERLAY + k, { show: box.checked });
        plot.setAttribute("data-overlays-shown", String(overlays.filter(function (_, i) {
          return u.series[FIRST_OVERLAY + i].show;
        }).length));
      });
      var swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = OVERLAY_COLORS[k % OVERLAY_COLORS.length];
      label.appendChild(box);
      label.appendChild(swatch);
      label.appendChild(document.createTextNode(o.label));
      picker.appendChild(label);
    });
    picker.hidden = false;
  }
  u.setScale("x", full);
  document.getElementById("history-reset").addEventListener("click", function () {
    u.setScale("x", full);
  });
  plot.addEventListener("mouseleave", function () { tip.hidden = true; });
  live.hidden = false;
  function fit() { u.setSize({ width: Math.min(live.clientWidth || 960, 1000), height: 360 }); }
  fit();
  window.addEventListener("resize", fit);
  document.getElementById("history-static").hidden = true;
  window.pitwallCharts = [u];
  live.setAttribute("data-ready", "1");
})();
