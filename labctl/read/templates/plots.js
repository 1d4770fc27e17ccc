// The site's plots, drawn in the reader's browser as SVG from the data each page embeds (a
// <script type="application/json" class="plot-data"> block beside a <div class="plot">): a run's
// medians against the parameter the reader picks, filtered by any parameter's value (the points
// table below follows the same filters), and a history's figure over commits, zoomed by dragging
// across it, each median a link to its commit. No server, no library, nothing fetched: a page
// opened from the disk draws the same. The state (the filters, the x parameter, the log scale,
// the zoom) lives in the address's #fragment, so a view can be shared; the page's tables and PNGs
// read the same without this script.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const WIDTH = 760, HEIGHT = 340, LEFT = 72, RIGHT = 16, TOP = 14, BOTTOM = 76;
  const COLOURS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#0550ae", "#a40e26",
                   "#116329", "#6639ba", "#953800"];

  function svg(name, attributes, parent) {
    const node = document.createElementNS(SVG, name);
    for (const key in attributes) node.setAttribute(key, attributes[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function html(name, attributes, parent, text) {
    const node = document.createElement(name);
    for (const key in attributes) node.setAttribute(key, attributes[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function format(value) {
    if (!isFinite(value)) return String(value);
    const magnitude = Math.abs(value);
    if (magnitude !== 0 && (magnitude >= 1e6 || magnitude < 1e-3)) return value.toExponential(2);
    return String(Number(value.toPrecision(3)));
  }

  // The #fragment as a map of name -> value, and back.
  function readState() {
    const state = {};
    for (const part of window.location.hash.replace(/^#/, "").split("&")) {
      if (!part) continue;
      const at = part.indexOf("=");
      if (at > 0) state[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1));
    }
    return state;
  }

  function writeState(state) {
    const parts = Object.keys(state).filter(k => state[k] !== "" && state[k] !== undefined)
      .map(k => encodeURIComponent(k) + "=" + encodeURIComponent(state[k]));
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : window.location.pathname);
  }

  // A linear or logarithmic map from [low, high] onto [from, to], with its ticks.
  function axis(low, high, from, to, log) {
    if (log) { low = Math.log10(low); high = Math.log10(high); }
    if (!(high > low)) { const middle = low; low = middle - (log ? 0.5 : Math.abs(middle) * 0.05 || 1);
                         high = middle + (log ? 0.5 : Math.abs(middle) * 0.05 || 1); }
    const map = v => from + ((log ? Math.log10(v) : v) - low) / (high - low) * (to - from);
    let ticks = [];
    if (log) {
      for (let e = Math.floor(low); e <= Math.ceil(high); e++)
        for (const m of (high - low < 2 ? [1, 2, 5] : [1]))
          { const v = m * Math.pow(10, e); if (Math.log10(v) >= low && Math.log10(v) <= high) ticks.push(v); }
    } else {
      const raw = (high - low) / 5, step = Math.pow(10, Math.floor(Math.log10(raw)));
      const nice = [1, 2, 5, 10].map(m => m * step).find(s => s >= raw);
      for (let v = Math.ceil(low / nice) * nice; v <= high + nice * 1e-9; v += nice) ticks.push(v);
    }
    return {map, ticks, invert: x => { const u = low + (x - from) / (to - from) * (high - low);
                                        return log ? Math.pow(10, u) : u; }};
  }

  function frame(plot, yAxis, yTitle, xTicks, xTitle) {
    const root = svg("svg", {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT,
                             role: "img", class: "drawn"});
    svg("rect", {x: LEFT, y: TOP, width: WIDTH - LEFT - RIGHT, height: HEIGHT - TOP - BOTTOM,
                 class: "area"}, root);
    for (const v of yAxis.ticks) {
      const y = yAxis.map(v);
      svg("line", {x1: LEFT, x2: WIDTH - RIGHT, y1: y, y2: y, class: "grid"}, root);
      svg("text", {x: LEFT - 6, y: y + 4, "text-anchor": "end"}, root).textContent = format(v);
    }
    for (const [x, label] of xTicks) {
      const text = svg("text", {x: x, y: HEIGHT - BOTTOM + 14, "text-anchor": "end",
                                transform: `rotate(-35 ${x} ${HEIGHT - BOTTOM + 14})`}, root);
      text.textContent = label;
    }
    svg("text", {x: 14, y: TOP + (HEIGHT - TOP - BOTTOM) / 2, "text-anchor": "middle",
                 transform: `rotate(-90 14 ${TOP + (HEIGHT - TOP - BOTTOM) / 2})`}, root).textContent = yTitle;
    svg("text", {x: LEFT + (WIDTH - LEFT - RIGHT) / 2, y: HEIGHT - 4, "text-anchor": "middle"}, root)
      .textContent = xTitle;
    plot.replaceChildren(root);
    return root;
  }

  function checkbox(controls, label, checked, changed) {
    const holder = html("label", {}, controls);
    const box = html("input", {type: "checkbox"}, holder);
    box.checked = checked;
    holder.append(" " + label);
    box.addEventListener("change", () => changed(box.checked));
    return box;
  }

  function select(controls, label, options, chosen, changed) {
    const holder = html("label", {}, controls, label + " ");
    const menu = html("select", {"data-name": label}, holder);
    for (const [value, text] of options) html("option", {value: value}, menu, text);
    menu.value = chosen;
    menu.addEventListener("change", () => changed(menu.value));
    return menu;
  }

  // -- a run: medians against a parameter, filtered -----------------------------------------------

  function numeric(values) { return values.every(v => v !== "" && isFinite(Number(v))); }

  function drawRun(container, data) {
    const state = readState();
    const plot = container.querySelector(".plot"), controls = container.querySelector(".controls");
    const kernels = [...new Set(data.points.filter(p => p.median !== null).map(p => p.kernel))];
    if (!kernels.length) { plot.textContent = "No point has a median to plot."; return; }
    const names = data.params;
    const values = name => [...new Set(data.points.map(p => p.params[name]).filter(v => v !== undefined))]
      .sort((a, b) => numeric([a, b]) ? Number(a) - Number(b) : String(a).localeCompare(String(b)));
    let kernel = kernels.includes(state.kernel) ? state.kernel : kernels[0];
    const filters = {};
    for (const name of names) filters[name] = values(name).map(String).includes(state[name]) ? state[name] : "";
    let x = names.includes(state.x) ? state.x : (names.includes("threads") ? "threads" : names[0] || "");
    let log = state.log === "1";

    const rows = [...document.querySelectorAll("tr[data-point]")];
    const matches = p => names.every(n => filters[n] === "" || String(p.params[n]) === filters[n]);

    function redraw() {
      writeState({kernel: kernels.length > 1 ? kernel : "", x: x, log: log ? "1" : "",
                  ...Object.fromEntries(names.map(n => [n, filters[n]]))});
      const shown = new Set(data.points.filter(matches).map(p => String(p.row)));
      for (const row of rows) row.hidden = !shown.has(row.dataset.point);
      document.body.dataset.pointsShown = shown.size + "/" + rows.length;

      const points = data.points.filter(p => p.kernel === kernel && p.median !== null && p.median > 0 && matches(p));
      if (!points.length) { plot.replaceChildren(html("p", {class: "note"}, null, "No point of " + kernel +
                                                       " has a median under these filters."));
                            plot.dataset.lines = "0"; plot.dataset.points = "0"; return; }
      const xs = x ? values(x).map(String).filter(v => points.some(p => String(p.params[x]) === v)) : [""];
      const byNumber = x && numeric(xs) && xs.every(v => Number(v) > 0);
      const wide = byNumber && Math.max(...xs.map(Number)) / Math.min(...xs.map(Number)) >= 10;
      const xAxis = byNumber ? axis(Math.min(...xs.map(Number)), Math.max(...xs.map(Number)), LEFT + 24,
                                    WIDTH - RIGHT - 24, wide)
                             : {map: v => LEFT + 24 + (xs.length > 1 ? xs.indexOf(String(v)) / (xs.length - 1) : 0.5)
                                        * (WIDTH - LEFT - RIGHT - 48)};
      const place = v => xAxis.map(byNumber ? Number(v) : String(v));
      const medians = points.map(p => p.median);
      const yAxis = axis(Math.min(...medians) / (log ? 1.2 : 1), Math.max(...medians) * (log ? 1.2 : 1),
                         HEIGHT - BOTTOM - 8, TOP + 8, log);
      const rest = names.filter(n => n !== x && filters[n] === "" && new Set(points.map(p => String(p.params[n]))).size > 1);
      const lines = new Map();
      for (const p of points) {
        const label = rest.map(n => n + "=" + (p.params[n] === undefined ? "-" : p.params[n])).join(" ") || kernel;
        if (!lines.has(label)) lines.set(label, []);
        lines.get(label).push(p);
      }
      const unit = points[0].unit, words = points[0].words;
      const root = frame(plot, yAxis, unit ? `${words} (${unit})` : words,
                         xs.map(v => [place(v), v]), x || "");
      const legend = html("ul", {class: "legend"});
      let index = 0, drawn = 0;
      for (const [label, members] of lines) {
        const colour = COLOURS[index++ % COLOURS.length];
        members.sort((a, b) => place(a.params[x]) - place(b.params[x]));
        if (members.length > 1)
          svg("polyline", {points: members.map(p => `${place(p.params[x])},${yAxis.map(p.median)}`).join(" "),
                           stroke: colour, class: "line"}, root);
        for (const p of members) {
          const link = svg("a", {href: "#point-" + p.row}, root);
          link.addEventListener("click", event => { event.preventDefault();
            document.getElementById("point-" + p.row).scrollIntoView(); });
          const dot = svg("circle", {cx: place(p.params[x]), cy: yAxis.map(p.median), r: 4, fill: colour,
                                     class: "median"}, link);
          svg("title", {}, dot).textContent = `point ${p.row}: ${label}${x ? ", " + x + "=" + p.params[x] : ""}: ` +
                                              `${format(p.median)} ${unit}`;
          drawn++;
        }
        const item = html("li", {}, legend);
        html("span", {class: "swatch", style: "background:" + colour}, item);
        item.append(" " + label);
      }
      plot.appendChild(legend);
      plot.dataset.lines = String(lines.size);
      plot.dataset.points = String(drawn);
    }

    if (kernels.length > 1)
      select(controls, "kernel", kernels.map(k => [k, k]), kernel, v => { kernel = v; redraw(); });
    if (names.length)
      select(controls, "x", names.map(n => [n, n]), x, v => { x = v; redraw(); });
    for (const name of names)
      select(controls, name, [["", "all"], ...values(name).map(v => [String(v), String(v)])], filters[name],
             v => { filters[name] = v; redraw(); });
    checkbox(controls, "log scale", log, v => { log = v; redraw(); });
    redraw();
  }

  // -- a history: one figure over commits, zoomed by dragging -------------------------------------

  function drawHistory(container, data) {
    const plot = container.querySelector(".plot"), controls = container.querySelector(".controls");
    const last = data.commits.length - 1;
    const zoom = (readState().zoom || "").match(/^(\d+)-(\d+)$/);
    let from = 0, to = last, log = false;
    if (zoom) { from = Math.max(0, Math.min(+zoom[1], last)); to = Math.max(from, Math.min(+zoom[2], last)); }

    function redraw() {
      const inside = ([order]) => order >= from && order <= to;
      const samples = data.samples.filter(inside), medians = data.medians.filter(inside);
      const values = samples.concat(medians).map(([, v]) => v).filter(v => isFinite(v) && (!log || v > 0));
      const xAxis = axis(from - 0.5, to + 0.5, LEFT, WIDTH - RIGHT, false);
      let low = Math.min(...values), high = Math.max(...values);
      // At least 2% of the level tall, as the PNG: a flat series is drawn flat, not as a cliff.
      const level = Math.abs((low + high) / 2), span = 0.02 * level;
      if (!log && high - low < span) { low = (low + high) / 2 - span / 2; high = low + span; }
      const yAxis = values.length ? axis(low, high, HEIGHT - BOTTOM - 8, TOP + 8, log)
                                  : axis(0, 1, HEIGHT - BOTTOM - 8, TOP + 8, false);
      const every = Math.max(1, Math.ceil((to - from + 1) / 16));
      const ticks = [];
      for (let order = from; order <= to; order += every) ticks.push([xAxis.map(order), data.commits[order].short]);
      const root = frame(plot, yAxis, data.axis, ticks, "commit, oldest first");
      for (const change of data.changes) {
        if (change.kind === "drift") {
          const left = Math.max(change.start - 0.5, from - 0.5), right = Math.min(change.end - 0.5, to + 0.5);
          if (right > left) svg("rect", {x: xAxis.map(left), y: TOP, width: xAxis.map(right) - xAxis.map(left),
                                         height: HEIGHT - TOP - BOTTOM, class: "drift"}, root);
        } else if (change.start - 0.5 >= from - 0.5 && change.start - 0.5 <= to + 0.5) {
          const at = xAxis.map(change.start - 0.5);
          svg("line", {x1: at, x2: at, y1: TOP, y2: HEIGHT - BOTTOM, class: "step"}, root);
        }
      }
      for (const [order, value] of samples)
        if (isFinite(value) && (!log || value > 0))
          svg("circle", {cx: xAxis.map(order), cy: yAxis.map(value), r: 2, class: "sample"}, root);
      const drawnMedians = medians.filter(([, v]) => isFinite(v) && (!log || v > 0));
      if (drawnMedians.length > 1)
        svg("polyline", {points: drawnMedians.map(([o, v]) => `${xAxis.map(o)},${yAxis.map(v)}`).join(" "),
                         stroke: COLOURS[0], class: "line"}, root);
      for (const [order, value] of drawnMedians) {
        const commit = data.commits[order];
        const link = svg("a", {href: commit.href}, root);
        const dot = svg("circle", {cx: xAxis.map(order), cy: yAxis.map(value), r: 4, fill: COLOURS[0],
                                   class: "median"}, link);
        svg("title", {}, dot).textContent = `${commit.short} ${commit.subject}: ${format(value)}`;
      }
      const selection = svg("rect", {y: TOP, height: HEIGHT - TOP - BOTTOM, width: 0, class: "selection"}, root);
      let start = null;
      const at = event => { const box = root.getBoundingClientRect();
                            return (event.clientX - box.left) * WIDTH / box.width; };
      root.addEventListener("mousedown", event => { start = at(event); event.preventDefault(); });
      root.addEventListener("mousemove", event => {
        if (start === null) return;
        const now = at(event);
        selection.setAttribute("x", Math.min(start, now));
        selection.setAttribute("width", Math.abs(now - start));
      });
      root.addEventListener("mouseup", event => {
        if (start === null) return;
        const a = Math.ceil(xAxis.invert(Math.min(start, at(event))));
        const b = Math.floor(xAxis.invert(Math.max(start, at(event))));
        start = null;
        if (b > a) { from = Math.max(a, 0); to = Math.min(b, last); redraw(); }
        else selection.setAttribute("width", 0);
      });
      root.addEventListener("dblclick", () => { from = 0; to = last; redraw(); });
      plot.dataset.range = from + "-" + to;
      plot.dataset.points = String(drawnMedians.length);
    }

    const reset = html("button", {type: "button"}, controls, "show every commit");
    reset.addEventListener("click", () => { from = 0; to = last; redraw(); });
    checkbox(controls, "log scale", log, v => { log = v; redraw(); });
    html("span", {class: "hint"}, controls, " Drag across the plot to zoom on those commits; a median links to its commit.");
    redraw();
  }

  window.addEventListener("DOMContentLoaded", () => {
    for (const block of document.querySelectorAll("script.plot-data")) {
      const container = block.parentElement, data = JSON.parse(block.textContent);
      container.classList.add("interactive");
      for (const image of container.querySelectorAll("img.fallback")) image.hidden = true;
      (data.kind === "run" ? drawRun : drawHistory)(container, data);
    }
    document.body.dataset.plotsDrawn = String(document.querySelectorAll("svg.drawn").length);
  });
})();
