"use strict";
const WINDOW_S = 60, MAX_POINTS = 3000, MAX_REQUESTS = 500;
const COLORS = ["#1f6feb", "#d9480f", "#1a7f37", "#8250df", "#bf8700", "#0a7ea4"];
// Models by name in objects without a prototype: a model named "toString" or "__proto__" is a
// model like any other.
// Until the first snapshot arrives the page has no data: it says "connecting…" (the first paint,
// in body.html) rather than draw zeros that read as an idle proxy.
const st = { sources: [], requests: new Map(), models: Object.create(null), snapshot: false };
const key = r => r.source + ":" + r.id;
const fmt = (x, d) => Number(x).toFixed(d);
function el(tag, attrs, text) {
  const e = document.createElementNS(tag === "svg" || attrs.svg ? "http://www.w3.org/2000/svg"
                                                                : "http://www.w3.org/1999/xhtml", tag);
  for (const [k, v] of Object.entries(attrs)) if (k !== "svg") e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function modelColor(name) {
  const names = Object.keys(st.models).sort();
  const i = Math.max(0, names.indexOf(name));
  return COLORS[i % COLORS.length];
}
function row(cells, attrs) {
  const tr = el("tr", attrs);
  for (const c of cells) tr.appendChild(el("td", {}, c));
  return tr;
}
function trim() {
  const done = [...st.requests.values()].filter(r => r.end_s >= 0)
    .sort((a, b) => a.end_s - b.end_s);
  for (let i = 0; i < done.length - MAX_REQUESTS; ++i) st.requests.delete(key(done[i]));
}
function counter(id, text) {
  const b = document.getElementById(id);
  b.textContent = text;
  b.classList.remove("waiting");
}
function drawTables() {
  const all = [...st.requests.values()];
  const flying = all.filter(r => r.end_s < 0);
  counter("in-flight", flying.length);
  let finished = 0;
  const mb = document.querySelector("#models tbody");
  mb.replaceChildren();
  for (const name of Object.keys(st.models).sort()) {
    const m = st.models[name];
    finished += m.requests;
    mb.appendChild(row([name, m.requests, m.tokens, fmt(m.energy_j, 1),
                        fmt(m.energy_j / Math.max(1, m.requests), 2),
                        m.tokens > 0 ? fmt(m.energy_j / m.tokens, 4) : "–"],
                       {"class": "model", "data-model": name}));
  }
  counter("finished", finished);
  const rb = document.querySelector("#requests tbody");
  rb.replaceChildren();
  const latest = all.sort((a, b) => (b.end_s < 0 ? 1e18 : b.end_s) - (a.end_s < 0 ? 1e18 : a.end_s))
    .slice(0, 20);
  for (const r of latest) {
    const src = st.sources[r.source] ? st.sources[r.source].name : "?";
    const live = r.end_s < 0;
    rb.appendChild(row([r.model || "(unnamed)", src, live ? "in flight" : r.status,
                        live && !r.tokens ? "…" : r.tokens, live ? "…" : fmt(r.energy_j, 2),
                        !live && r.tokens > 0 ? fmt(r.energy_j / r.tokens, 4) : "–",
                        live ? "…" : fmt(r.end_s - r.start_s, 2)],
                       {"class": live ? "request in-flight" : "request finished"}));
  }
}
function drawChart() {
  const svg = document.getElementById("chart");
  svg.replaceChildren();
  // --govern: the SM clock chosen has its own axis at the right, with room for its ticks.
  let cmax = 0;
  for (const s of st.sources) for (const c of s.clock) cmax = Math.max(cmax, c[1]);
  const W = 900, H = 260, L = 50, R = cmax > 0 ? 64 : 10, T = 10, PH = 170, LANE = 8;
  // The server's clock: the newest power point (the browser's clock may differ).
  let now = 0;
  for (const s of st.sources) if (s.power.length) now = Math.max(now, s.power[s.power.length - 1][0]);
  if (now === 0) now = Date.now() / 1000;
  // The last minute, or less while the proxy is younger (at least 5 s).
  let first = now;
  for (const s of st.sources) if (s.power.length) first = Math.min(first, s.power[0][0]);
  const span = Math.max(5, Math.min(WINDOW_S, now - first));
  const t0 = now - span;
  let wmax = 1;
  for (const s of st.sources) for (const p of s.power) if (p[0] >= t0) wmax = Math.max(wmax, p[1]);
  wmax *= 1.1;
  const x = t => L + (W - L - R) * (t - t0) / span;
  const y = w => T + PH - PH * w / wmax;
  svg.appendChild(el("line", {svg: 1, x1: L, y1: T + PH, x2: W - R, y2: T + PH, stroke: "#aab6c3"}));
  svg.appendChild(el("line", {svg: 1, x1: L, y1: T, x2: L, y2: T + PH, stroke: "#aab6c3"}));
  for (const f of [0, 0.5, 1]) {
    svg.appendChild(el("text", {svg: 1, x: 4, y: y(wmax * f / 1.1) + 4}, fmt(wmax * f / 1.1, 0) + " W"));
  }
  for (const s of [0, span / 2, span]) {
    svg.appendChild(el("text", {svg: 1, x: x(now - s) - 12, y: H - 4}, s === 0 ? "now" : "-" + fmt(s, 0) + " s"));
  }
  // The clock's axis: 0 to 1.25 x the highest clock (the line's top at 80 % of the chart's height,
  // so the clock and the power lines do not share it), ticks at round MHz, titled; the clock in
  // force is labelled at the line's end ("now 900 MHz"), so no tick reads as the current clock.
  const ctop = cmax * 1.25;
  const yc = mhz => T + PH - PH * mhz / ctop;
  if (cmax > 0) {
    const amber = "fill:#bf8700";
    svg.appendChild(el("line", {svg: 1, "class": "clock-axis", x1: W - R, y1: T, x2: W - R, y2: T + PH,
                                stroke: "#bf8700"}));
    const tick = [100, 200, 250, 500, 1000, 2000].find(t => ctop / t <= 5) || 5000;
    for (let m = 0; m <= ctop; m += tick) {
      svg.appendChild(el("line", {svg: 1, x1: W - R, y1: yc(m), x2: W - R + 4, y2: yc(m), stroke: "#bf8700"}));
      svg.appendChild(el("text", {svg: 1, "class": "clock-tick", x: W - R + 6, y: yc(m) + 4, style: amber},
                         fmt(m, 0)));
    }
    const tx = W - 6, ty = T + PH / 2;
    svg.appendChild(el("text", {svg: 1, "class": "clock-axis-title", x: tx, y: ty, style: amber,
                                "text-anchor": "middle", transform: "rotate(-90 " + tx + " " + ty + ")"},
                       "SM clock, MHz"));
  }
  const legend = document.getElementById("legend");
  legend.replaceChildren();
  st.sources.forEach((s, i) => {
    const pts = s.power.filter(p => p[0] >= t0).map(p => fmt(x(p[0]), 1) + "," + fmt(y(p[1]), 1));
    const color = ["#1d2733", "#6e7781", "#0a3069"][i % 3];
    if (pts.length > 0) {
      svg.appendChild(el("polyline", {svg: 1, "class": "power", points: pts.join(" "), fill: "none",
                                      stroke: color, "stroke-width": 2, "data-source": s.name}));
    }
    legend.appendChild(el("span", {style: "color:" + color},
                          "— power of " + (s.name === "proxy" ? "" : s.name + ": ") + s.gpus));
    const cpts = s.clock.filter(c => c[0] >= t0).map(c => fmt(x(c[0]), 1) + "," + fmt(yc(c[1]), 1));
    if (cpts.length > 0) {
      svg.appendChild(el("polyline", {svg: 1, "class": "clock", points: cpts.join(" "), fill: "none",
                                      stroke: "#bf8700", "stroke-width": 2, "stroke-dasharray": "6 3"}));
      legend.appendChild(el("span", {style: "color:#bf8700"}, "- - SM clock chosen by --govern (MHz, right axis)"));
      const c = s.clock[s.clock.length - 1];
      svg.appendChild(el("text", {svg: 1, "class": "clock-now", x: W - R - 4, y: yc(c[1]) - 5,
                                  "text-anchor": "end",
                                  style: "fill:#bf8700;font-weight:600;paint-order:stroke;stroke:#fff;stroke-width:4px"},
                         "now " + fmt(c[1], 0) + " MHz"));
    }
  });
  for (const name of Object.keys(st.models).sort()) {
    legend.appendChild(el("span", {style: "color:" + modelColor(name)}, "▬ " + name));
  }
  // Request spans in lanes under the power line.
  const lanes = [];
  const spans = [...st.requests.values()].filter(r => r.end_s < 0 || r.end_s >= t0)
    .sort((a, b) => a.start_s - b.start_s);
  for (const r of spans) {
    const end = r.end_s < 0 ? now : r.end_s;
    let lane = lanes.findIndex(e => e <= r.start_s);
    if (lane < 0) { lane = lanes.length; lanes.push(0); }
    lanes[lane] = end;
    if (lane >= 8) continue;
    const x0 = x(Math.max(t0, r.start_s));
    const rect = el("rect", {svg: 1, "class": "span", x: fmt(x0, 1), y: T + PH + 6 + lane * LANE,
                             width: fmt(Math.max(1, x(end) - x0), 1), height: LANE - 2,
                             fill: modelColor(r.model || "(unnamed)"),
                             opacity: r.end_s < 0 ? 0.5 : 0.9});
    rect.appendChild(el("title", {svg: 1}, (r.model || "(unnamed)") +
      (r.end_s < 0 ? ": in flight" : ": " + fmt(r.energy_j, 2) + " J, " + r.tokens + " tokens")));
    svg.appendChild(rect);
  }
  const last = st.sources.map(s => s.power.length ? s.power[s.power.length - 1][1] : 0);
  counter("power-now", st.sources.length ? fmt(last.reduce((a, b) => a + b, 0), 0) : "–");
  const governed = st.sources.find(s => s.clock.length);
  document.getElementById("clock-card").hidden = !governed;
  if (governed) {
    const c = governed.clock[governed.clock.length - 1];
    document.getElementById("clock-now").textContent = fmt(c[1], 0);
    document.getElementById("clock-what").textContent =
      "SM clock chosen by --govern (MHz); " + fmt(100 * c[2], 1) + " % of streamed requests within the SLOs";
  }
}
let pending = false;
function redraw() {
  if (pending || !st.snapshot) return;
  pending = true;
  setTimeout(() => { pending = false; drawTables(); drawChart(); }, 200);
}
function connect() {
  const events = new EventSource("/zeus/events");
  events.addEventListener("snapshot", e => {
    const s = JSON.parse(e.data);
    st.sources = s.sources.map(x => ({name: x.name, gpus: x.gpus, power: x.power, clock: x.clock || []}));
    st.requests = new Map(s.requests.map(r => [key(r), r]));
    st.models = Object.assign(Object.create(null), s.models);
    st.snapshot = true;
    document.getElementById("status").textContent = "live";
    document.getElementById("error").textContent = "";
    redraw();
  });
  events.addEventListener("power", e => {
    const p = JSON.parse(e.data);
    const s = st.sources[p.source];
    if (!s) return;
    s.power.push([p.t, p.w]);
    if (s.power.length > MAX_POINTS) s.power.splice(0, s.power.length - MAX_POINTS);
    redraw();
  });
  events.addEventListener("clock", e => {
    const c = JSON.parse(e.data);
    const s = st.sources[c.source];
    if (!s) return;
    s.clock.push([c.t, c.mhz, c.attainment]);
    if (s.clock.length > MAX_POINTS) s.clock.splice(0, s.clock.length - MAX_POINTS);
    redraw();
  });
  events.addEventListener("start", e => { const r = JSON.parse(e.data); st.requests.set(key(r), r); redraw(); });
  events.addEventListener("end", e => {
    const r = JSON.parse(e.data);
    st.requests.set(key(r), r);
    const name = r.model || "(unnamed)";
    const m = st.models[name] || (st.models[name] = {requests: 0, energy_j: 0, tokens: 0});
    m.requests += 1; m.energy_j += r.energy_j; m.tokens += r.tokens;
    trim();
    redraw();
  });
  events.onerror = () => {
    document.getElementById("status").textContent =
      st.snapshot ? "reconnecting…" : "connecting… (no answer from /zeus/events yet; retrying)";
  };
}
connect();
setInterval(redraw, 1000);
