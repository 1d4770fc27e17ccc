// plots.js: the site's interactive plots, drawn as inline SVG from the JSON a page embeds in
// <script type="application/json" class="plot-data"> (labctl.read.site writes both). No library and
// nothing fetched: without script the page shows its table or PNG instead.
//
// A run's plot ("run"): each point's median with its 95% interval, one line per configuration
// of the parameters not on the x axis; a select picks the x parameter, checkboxes hide values of
// any parameter; a numeric x spanning a factor of 8 or more is drawn on a log scale, and up to 12
// values are its ticks. A history's plot ("history"): each commit's median with its samples' range,
// each point a link to its commit's row, its steps dashed and its drifts shaded. Both: drag
// across the plot to zoom to an x range, "Whole range" to zoom out, "Log y" to toggle the scale.
// The state (x, hidden values, log, zoom) is kept in the address's #fragment, so a view can be
// linked: #x=leaves&hide=dispatcher%3Done_thread&ylog=1&from=10&to=1000.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var WIDTH = 860, HEIGHT = 340, LEFT = 72, RIGHT = 16, TOP = 12, BOTTOM = 48;
  var COLOURS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#1b7c83", "#d4a72c", "#57606a"];
  // Past eight lines a colour comes back with another marker and dash: 24 lines, no two alike.
  var MARKERS = ["circle", "square", "diamond"];
  var DASHES = ["", "6 3", "2 3"];

  // The style of the k-th line: {colour, marker, dash}.
  function style(k) {
    var round = Math.floor(k / COLOURS.length) % MARKERS.length;
    return {colour: COLOURS[k % COLOURS.length], marker: MARKERS[round], dash: DASHES[round]};
  }

  // A marker of `line`'s style at (cx, cy), of radius r: a point's (class point) or, in a
  // legend's swatch, its picture (class "").
  function marker(parent, line, cx, cy, r, kind) {
    var attributes = {fill: line.colour, "class": kind};
    if (line.marker === "square") {
      attributes.x = cx - r; attributes.y = cy - r; attributes.width = 2 * r; attributes.height = 2 * r;
      return node("rect", attributes, parent);
    }
    if (line.marker === "diamond") {
      attributes.points = [[cx, cy - r * 1.3], [cx + r * 1.3, cy], [cx, cy + r * 1.3], [cx - r * 1.3, cy]].join(" ");
      return node("polygon", attributes, parent);
    }
    attributes.cx = cx; attributes.cy = cy; attributes.r = r;
    return node("circle", attributes, parent);
  }

  function finite(v) { return typeof v === "number" && isFinite(v); }

  function node(name, attributes, parent, text) {
    var made = document.createElementNS(SVG, name);
    for (var key in attributes) made.setAttribute(key, attributes[key]);
    if (text !== undefined) made.textContent = text;
    if (parent) parent.appendChild(made);
    return made;
  }

  function html(name, attributes, parent, text) {
    var made = document.createElement(name);
    for (var key in attributes) made.setAttribute(key, attributes[key]);
    if (text !== undefined) made.textContent = text;
    if (parent) parent.appendChild(made);
    return made;
  }

  // -- the view's state, in the address's fragment -------------------------------------------

  function readState() {
    var found = new URLSearchParams(location.hash.slice(1));
    var from = parseFloat(found.get("from")), to = parseFloat(found.get("to"));
    return {x: found.get("x"), hide: found.getAll("hide"), ylog: found.get("ylog") === "1",
            range: isFinite(from) && isFinite(to) && from < to ? [from, to] : null};
  }

  function saveState(state) {
    var kept = new URLSearchParams();
    if (state.x) kept.set("x", state.x);
    state.hide.forEach(function (value) { kept.append("hide", value); });
    if (state.ylog) kept.set("ylog", "1");
    if (state.range) {
      kept.set("from", String(Number(state.range[0].toPrecision(4))));
      kept.set("to", String(Number(state.range[1].toPrecision(4))));
    }
    try { history.replaceState(null, "", "#" + kept.toString()); } catch (error) { /* file:// may refuse */ }
  }

  // -- scales and ticks ----------------------------------------------------------------------

  function scale(low, high, from, to, log) {
    var f = log ? Math.log10 : function (v) { return v; };
    var a = f(low), b = f(high);
    if (!(b > a)) { a -= 0.5; b += 0.5; }
    var map = function (v) { return from + (f(v) - a) / (b - a) * (to - from); };
    map.invert = function (p) {
      var v = a + (p - from) / (to - from) * (b - a);
      return log ? Math.pow(10, v) : v;
    };
    return map;
  }

  function ticks(low, high, log) {
    var found = [];
    if (log) {
      for (var e = Math.floor(Math.log10(low)); e <= Math.ceil(Math.log10(high)); e++) {
        [1, 2, 5].forEach(function (m) {
          var v = m * Math.pow(10, e);
          if (v >= low && v <= high) found.push(v);
        });
      }
      if (found.length >= 2) return found;
    }
    var raw = (high - low) / 5 || 1, power = Math.pow(10, Math.floor(Math.log10(raw))), unit = raw / power;
    var step = (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
    for (var v = Math.ceil(low / step) * step; v <= high + step * 1e-9; v += step) found.push(v);
    return found;
  }

  function number(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
    return String(parseFloat(v.toPrecision(4)));
  }

  // -- a chart -------------------------------------------------------------------------------

  // Draws `lines` (each {colour, marker, dash, label, points: [{x, y, low, high, title, href}]}) and `marks`
  // (steps {kind: "step", x}, drifts {kind: "drift", from, to}) into a fresh SVG in `holder`.
  // `axis.labels`, where given, names the integer x positions (a category, a commit).
  function chart(holder, lines, marks, axis, state, redraw) {
    holder.textContent = "";
    var all = [];
    lines.forEach(function (line) { line.points.forEach(function (p) { all.push(p); }); });
    var xs = all.map(function (p) { return p.x; });
    var ys = [];
    all.forEach(function (p) {
      [p.y, p.low, p.high].forEach(function (v) { if (finite(v) && (!state.ylog || v > 0)) ys.push(v); });
    });
    var svg = node("svg", {viewBox: "0 0 " + WIDTH + " " + HEIGHT, width: "100%", role: "img",
                           "class": "plot", "aria-label": axis.title}, holder);
    if (!all.length || !ys.length) {
      node("text", {x: WIDTH / 2, y: HEIGHT / 2, "text-anchor": "middle", "class": "empty"}, svg,
           "Nothing to draw: every point is hidden or out of the range.");
      return svg;
    }
    var xLow = Math.min.apply(null, xs), xHigh = Math.max.apply(null, xs);
    var pad = axis.labels ? 0.5 : (xHigh - xLow) * 0.03 || 0.5;
    if (axis.xlog) pad = 0;
    var yLow = Math.min.apply(null, ys), yHigh = Math.max.apply(null, ys);
    if (axis.span && !state.ylog && yHigh - yLow < axis.span) {  // a flat series drawn flat
      var middle = (yHigh + yLow) / 2;
      yLow = middle - axis.span / 2; yHigh = middle + axis.span / 2;
    }
    if (!state.ylog) { var room = (yHigh - yLow) * 0.05 || Math.abs(yHigh) * 0.05 || 1; yLow -= room; yHigh += room; }
    var x = scale(axis.xlog ? xLow / 1.2 : xLow - pad, axis.xlog ? xHigh * 1.2 : xHigh + pad,
                  LEFT, WIDTH - RIGHT, axis.xlog);
    var y = scale(yLow, yHigh, HEIGHT - BOTTOM, TOP, state.ylog);
    var grid = node("g", {"class": "grid"}, svg);
    ticks(yLow, yHigh, state.ylog).forEach(function (v) {
      node("line", {x1: LEFT, x2: WIDTH - RIGHT, y1: y(v), y2: y(v)}, grid);
      node("text", {x: LEFT - 6, y: y(v) + 4, "text-anchor": "end"}, grid, number(v));
    });
    var xTicks = axis.labels
      ? xs.filter(function (v, i) { return xs.indexOf(v) === i; }).sort(function (a, b) { return a - b; })
      : axis.at ? axis.at.filter(function (v) { return v >= x.invert(LEFT) && v <= x.invert(WIDTH - RIGHT); })
      : ticks(x.invert(LEFT), x.invert(WIDTH - RIGHT), axis.xlog);
    var every = Math.max(1, Math.ceil(xTicks.length / 24));
    xTicks.forEach(function (v, i) {
      if (i % every) return;
      var label = axis.labels ? axis.labels[v] : number(v);
      node("text", {x: x(v), y: HEIGHT - BOTTOM + 16, "text-anchor": "middle"}, grid, label);
    });
    node("text", {x: (LEFT + WIDTH - RIGHT) / 2, y: HEIGHT - 8, "text-anchor": "middle", "class": "axis"}, svg, axis.x);
    node("text", {x: 14, y: (TOP + HEIGHT - BOTTOM) / 2, "text-anchor": "middle", "class": "axis",
                  transform: "rotate(-90 14 " + (TOP + HEIGHT - BOTTOM) / 2 + ")"}, svg, axis.y);
    node("rect", {x: LEFT, y: TOP, width: WIDTH - LEFT - RIGHT, height: HEIGHT - TOP - BOTTOM, "class": "frame"}, svg);
    marks.forEach(function (mark) {
      if (mark.kind === "drift") {
        var from = Math.max(LEFT, x(mark.from)), to = Math.min(WIDTH - RIGHT, x(mark.to));
        node("rect", {x: from, width: Math.max(1, to - from), y: TOP,
                      height: HEIGHT - TOP - BOTTOM, "class": "drift"}, svg);
      } else {
        node("line", {x1: x(mark.x), x2: x(mark.x), y1: TOP, y2: HEIGHT - BOTTOM, "class": "step"}, svg);
      }
    });
    lines.forEach(function (line) {
      var shown = line.points.filter(function (p) { return finite(p.y) && (!state.ylog || p.y > 0); });
      if (shown.length > 1) {
        node("path", {d: shown.map(function (p, i) { return (i ? "L" : "M") + x(p.x).toFixed(1) + "," + y(p.y).toFixed(1); }).join(""),
                      stroke: line.colour, "stroke-dasharray": line.dash || "none", "class": "line"}, svg);
      }
      shown.forEach(function (p) {
        if (finite(p.low) && finite(p.high) && (!state.ylog || p.low > 0)) {
          node("line", {x1: x(p.x), x2: x(p.x), y1: y(p.low), y2: y(p.high), stroke: line.colour, "class": "interval"}, svg);
        }
        var parent = p.href ? node("a", {href: p.href, "class": "point-link"}, svg) : svg;
        var dot = marker(parent, line, x(p.x), y(p.y), 4, "point");
        node("title", {}, dot, p.title);
      });
    });
    zoom(svg, x, state, redraw);
    return svg;
  }

  // Drag across the plot: zoom to the x range dragged over.
  function zoom(svg, x, state, redraw) {
    var start = null, band = null;
    function at(event) {
      var box = svg.getBoundingClientRect();
      return (event.clientX - box.left) / box.width * WIDTH;
    }
    svg.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || event.target.closest("a")) return;
      start = at(event);
      band = node("rect", {x: start, y: TOP, width: 0, height: HEIGHT - TOP - BOTTOM, "class": "band"}, svg);
      svg.setPointerCapture(event.pointerId);
      event.preventDefault();
    });
    svg.addEventListener("pointermove", function (event) {
      if (start === null) return;
      var now = at(event);
      band.setAttribute("x", Math.min(start, now));
      band.setAttribute("width", Math.abs(now - start));
    });
    svg.addEventListener("pointerup", function (event) {
      if (start === null) return;
      var end = at(event), from = Math.min(start, end), to = Math.max(start, end);
      start = null;
      band.remove();
      if (to - from < 6) return;
      state.range = [x.invert(from), x.invert(to)];
      redraw();
    });
  }

  function inRange(state, v) {
    return !state.range || (v >= state.range[0] && v <= state.range[1]);
  }

  // The buttons every plot has: the whole x range, and log or linear y.
  function buttons(controls, state, redraw) {
    var whole = html("button", {type: "button", "class": "whole"}, controls, "Whole range");
    whole.addEventListener("click", function () { state.range = null; redraw(); });
    var log = html("button", {type: "button", "class": "ylog"}, controls, "Log y");
    log.addEventListener("click", function () { state.ylog = !state.ylog; redraw(); });
    return function () {
      whole.disabled = !state.range;
      log.textContent = state.ylog ? "Linear y" : "Log y";
    };
  }

  // -- a run's points ------------------------------------------------------------------------

  function numeric(values) {
    return values.every(function (v) { return v.trim() !== "" && isFinite(Number(v)); });
  }

  function runPlot(box, data, state) {
    var names = data.params;
    if (names.indexOf(state.x) < 0) state.x = data.x;
    html("p", {"class": "plot-title"}, box, data.title);
    var controls = html("div", {"class": "controls"}, box);
    var holder = html("div", {"class": "holder"}, box);
    var legend = html("ul", {"class": "legend"}, box);
    var update;
    if (names.length > 1) {
      var label = html("label", {}, controls, "x axis: ");
      var select = html("select", {"class": "x"}, label);
      names.forEach(function (name) { html("option", {value: name}, select, name); });
      select.value = state.x;
      select.addEventListener("change", function () { state.x = select.value; state.range = null; redraw(); });
    }
    var values = {};
    names.forEach(function (name) {
      values[name] = [];
      data.points.forEach(function (p) { if (values[name].indexOf(p.params[name]) < 0) values[name].push(p.params[name]); });
      // Numbers in order, words as the alphabet has them, "-" (does not apply) last.
      if (numeric(values[name])) values[name].sort(function (a, b) { return a - b; });
      else values[name].sort(function (a, b) { return (a === "-") - (b === "-") || String(a).localeCompare(String(b)); });
    });
    names.forEach(function (name) {
      if (values[name].length < 2) return;
      var set = html("fieldset", {"class": "filter"}, controls);
      html("legend", {}, set, name);
      values[name].forEach(function (value) {
        var label = html("label", {}, set);
        var box = html("input", {type: "checkbox", value: name + "=" + value}, label);
        box.checked = state.hide.indexOf(box.value) < 0;
        box.addEventListener("change", function () {
          state.hide = state.hide.filter(function (h) { return h !== box.value; });
          if (!box.checked) state.hide.push(box.value);
          redraw();
        });
        label.appendChild(document.createTextNode(" " + value));
      });
    });
    update = buttons(controls, state, redraw);
    // A line's style is its configuration's among all, so hiding one never restyles the rest.
    var styles = {};
    function configuration(p) {
      return names.filter(function (n) { return n !== state.x; })
        .map(function (n) { return n + "=" + p.params[n]; }).join(" ");
    }
    function redraw() {
      var onAxis = state.x ? values[state.x] : [""];
      var isNumber = state.x && numeric(onAxis);
      var xlog = isNumber && onAxis.every(function (v) { return Number(v) > 0; }) &&
        Number(onAxis[onAxis.length - 1]) / Number(onAxis[0]) >= 8;
      var position = function (p) {
        var v = state.x ? p.params[state.x] : "";
        return isNumber ? Number(v) : onAxis.indexOf(v);
      };
      var lines = [], byName = {};
      data.points.forEach(function (p) {
        var name = configuration(p);
        if (!(name in styles)) styles[name] = style(Object.keys(styles).length);
        var hidden = names.some(function (n) { return state.hide.indexOf(n + "=" + p.params[n]) >= 0; });
        if (hidden || !inRange(state, position(p))) return;
        if (!(name in byName)) {
          var s = styles[name];
          byName[name] = {colour: s.colour, marker: s.marker, dash: s.dash, label: name, points: []};
          lines.push(byName[name]);
        }
        byName[name].points.push({x: position(p), y: p.median, low: p.low, high: p.high, title: p.title});
      });
      lines.forEach(function (line) { line.points.sort(function (a, b) { return a.x - b.x; }); });
      // A few numbers on the axis (threads 1, 2, 4, 8, 16) are its ticks; more get round ones.
      var at = isNumber && onAxis.length <= 12 ? onAxis.map(Number) : null;
      chart(holder, lines, [], {title: data.title, x: state.x || "point", y: data.y, xlog: xlog, at: at,
                                labels: isNumber ? null : onAxis}, state, redraw);
      legend.textContent = "";
      lines.forEach(function (line) {
        var item = html("li", {}, legend);
        var swatch = node("svg", {"class": "swatch", viewBox: "0 0 28 10", width: 28, height: 10}, item);
        node("line", {x1: 1, x2: 27, y1: 5, y2: 5, stroke: line.colour, "stroke-width": 2,
                      "stroke-dasharray": line.dash || "none"}, swatch);
        marker(swatch, line, 14, 5, 3.5, "");
        item.appendChild(document.createTextNode(line.label || data.kernel));
      });
      if (select) select.value = state.x;
      update();
      saveState(state);
    }
    redraw();
  }

  // -- a history's series --------------------------------------------------------------------

  function historyPlot(box, data, commits, state) {
    var controls = html("div", {"class": "controls"}, box);
    var holder = html("div", {"class": "holder"}, box);
    var update = buttons(controls, state, redraw);
    var labels = commits.map(function (c) { return c.short.slice(0, 7); });
    // The y axis spans at least data.min_span of the medians' level, as the PNG's does.
    function span() {
      var medians = data.points.map(function (p) { return p.median; }).filter(finite).sort(function (a, b) { return a - b; });
      return medians.length ? Math.abs(medians[Math.floor(medians.length / 2)]) * data.min_span : 0;
    }
    function redraw() {
      var points = data.points.filter(function (p) { return inRange(state, p.order); }).map(function (p) {
        var commit = commits[p.order];
        return {x: p.order, y: p.median, low: p.low, high: p.high, href: commit.href,
                title: commit.short + " " + commit.subject + "\n" + p.shown};
      });
      var marks = data.changes.filter(function (c) {
        return c.kind === "drift" ? !state.range || (c.end >= state.range[0] && c.start <= state.range[1]) : inRange(state, c.start);
      }).map(function (c) {
        return c.kind === "drift" ? {kind: "drift", from: c.start - 0.5, to: c.end - 0.5} : {kind: "step", x: c.start - 0.5};
      });
      var only = style(0);
      chart(holder, [{colour: only.colour, marker: only.marker, dash: only.dash, label: "", points: points}], marks,
            {title: data.title, x: "commit, oldest first", y: data.y, labels: labels, span: span()}, state, redraw);
      update();
      saveState(state);
    }
    redraw();
  }

  // -- the page ------------------------------------------------------------------------------

  function start() {
    var state = readState();
    var commits = document.getElementById("commits-data");
    commits = commits ? JSON.parse(commits.textContent) : [];
    var found = document.querySelectorAll("script.plot-data");
    for (var i = 0; i < found.length; i++) {
      var data = JSON.parse(found[i].textContent);
      var own = {x: state.x, hide: state.hide.slice(), ylog: state.ylog, range: state.range};
      var box = html("div", {"class": "interactive"}, null);
      found[i].insertAdjacentElement("afterend", box);
      if (data.kind === "run") runPlot(box, data, own);
      else historyPlot(box, data, commits, own);
    }
    document.body.dataset.plots = String(found.length);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
