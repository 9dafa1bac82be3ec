// The dashboard page (server/dashboard.h), as a raw string literal.
#include "server/dashboard.h"

namespace zeus::server {
namespace {

constexpr std::string_view kPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Zeus batch-size optimizer</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2733; background: #f5f7fa; }
  header { background: #1d2733; color: #fff; padding: 10px 20px; display: flex; gap: 16px;
           align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  header span { color: #aab6c3; font-size: 12px; }
  main { padding: 16px 20px; display: grid; gap: 16px; }
  section { background: #fff; border: 1px solid #dde3ea; border-radius: 6px; padding: 12px 16px; }
  h2 { font-size: 15px; margin: 16px 0 8px; }
  h2:first-child { margin-top: 0; }
  .legend span { margin-right: 14px; font-size: 12px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #edf0f4;
           font-variant-numeric: tabular-nums; }
  th { font-weight: 600; color: #516070; font-size: 12px; }
  tr.job { cursor: pointer; }
  tr.job:hover, tr.selected { background: #eaf2fd; }
  .status-converged { color: #1a7f37; font-weight: 600; }
  .status-not_converged { color: #c0392b; font-weight: 600; }
  .status-failed { color: #7d8790; }
  .status-dispatched { color: #1f6feb; }
  .muted { color: #7d8790; }
  .bar { position: relative; height: 12px; background: #edf0f4; border-radius: 3px; min-width: 160px; }
  .bar i { position: absolute; top: 2px; height: 8px; background: #9cc3f5; border-radius: 2px; }
  .bar b { position: absolute; top: 0; width: 2px; height: 12px; background: #1f6feb; }
  svg text { font-size: 11px; fill: #516070; }
  #error { color: #c0392b; }
</style>
</head>
<body>
<header><h1>Zeus batch-size optimizer</h1><span id="updated">loading…</span></header>
<main>
  <div id="error"></div>
  <section><h2>Jobs</h2>
    <table id="jobs"><thead><tr><th>job id</th><th>GPU</th><th>batch sizes</th><th>trials</th>
      <th>converged</th><th>not converged</th><th>failed</th><th>running</th><th>min cost (J)</th>
    </tr></thead><tbody></tbody></table>
    <p id="no-jobs" class="muted" hidden>No jobs registered yet (POST /jobs).</p>
  </section>
  <section id="detail" hidden>
    <h2 id="detail-title"></h2>
    <p id="detail-summary" class="muted"></p>
    <h2>Cost of each recurrence</h2>
    <svg id="chart" width="720" height="220" role="img" aria-label="cost per trial"></svg>
    <div class="legend"><span class="status-converged">● converged</span>
      <span class="status-not_converged">● not converged (stopped early or out of epochs)</span>
      <span class="muted">failed and running trials have no cost</span></div>
    <h2>Beliefs per batch size (mean cost ± spread)</h2>
    <table id="arms"><thead><tr><th>batch size</th><th>bandit arm</th><th>observations</th>
      <th>mean cost (J)</th><th>± spread (J)</th><th></th></tr></thead><tbody></tbody></table>
    <h2>Trial timeline</h2>
    <table id="trials"><thead><tr><th>trial</th><th>batch size</th><th>stage</th><th>status</th>
      <th>cost (J)</th><th>epochs</th><th>time (s)</th><th>energy (J)</th><th>metric</th>
    </tr></thead><tbody></tbody></table>
  </section>
</main>
<script>
"use strict";
const fmt = (v, d = 1) => (v === null || v === undefined) ? "–" : Number(v).toFixed(d);
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}
function svgEl(name, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
async function getJson(path) {
  const r = await fetch(path, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(path + ": " + (body && body.message ? body.message : r.status));
  return body;
}
function selectedId(jobs) {
  const want = decodeURIComponent(location.hash.slice(1));
  if (jobs.some(j => j.job_id === want)) return want;
  return jobs.length ? jobs[0].job_id : null;
}
function renderJobs(jobs, selected) {
  const body = document.querySelector("#jobs tbody");
  body.replaceChildren();
  for (const j of jobs) {
    const tr = document.createElement("tr");
    tr.className = "job" + (j.job_id === selected ? " selected" : "");
    tr.dataset.jobId = j.job_id;
    cell(tr, j.job_id);
    cell(tr, j.gpu_model || "–");
    cell(tr, j.batch_sizes.join(", "));
    cell(tr, j.num_trials);
    cell(tr, j.converged, "status-converged");
    cell(tr, j.not_converged, "status-not_converged");
    cell(tr, j.failed, "status-failed");
    cell(tr, j.dispatched, "status-dispatched");
    cell(tr, fmt(j.min_cost));
    tr.addEventListener("click", () => { location.hash = encodeURIComponent(j.job_id); });
    body.appendChild(tr);
  }
  document.getElementById("no-jobs").hidden = jobs.length > 0;
}
function renderChart(trials) {
  const svg = document.getElementById("chart");
  svg.replaceChildren();
  const W = 720, H = 220, L = 60, R = 10, T = 10, B = 30;
  const pts = trials.filter(t => t.status === "converged" || t.status === "not_converged");
  const maxCost = Math.max(1e-9, ...pts.map(t => t.cost));
  const n = Math.max(1, ...trials.map(t => t.trial_number));
  const x = k => L + (W - L - R) * (n === 1 ? 0.5 : (k - 1) / (n - 1));
  const y = c => H - B - (H - T - B) * (c / maxCost);
  svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#aab6c3" }));
  svg.appendChild(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#aab6c3" }));
  const yl = svgEl("text", { x: 4, y: T + 10 }); yl.textContent = fmt(maxCost, 0) + " J";
  const xl = svgEl("text", { x: W - 90, y: H - 8 }); xl.textContent = "trial " + n;
  svg.append(yl, xl);
  const colors = { converged: "#1a7f37", not_converged: "#c0392b", failed: "#7d8790" };
  for (const t of pts) {
    const c = svgEl("circle", { cx: x(t.trial_number), cy: y(t.cost), r: 4,
                                fill: colors[t.status] || "#1f6feb" });
    const tip = svgEl("title", {});
    tip.textContent = "trial " + t.trial_number + ", batch size " + t.batch_size + ": " +
                      fmt(t.cost) + " J, " + t.status;
    c.appendChild(tip);
    svg.appendChild(c);
  }
}
function renderArms(arms) {
  const body = document.querySelector("#arms tbody");
  body.replaceChildren();
  const hi = Math.max(1e-9, ...arms.filter(a => a.mean_cost !== null)
                                   .map(a => a.mean_cost + (a.stddev_cost || 0)));
  for (const a of arms) {
    const tr = document.createElement("tr");
    cell(tr, a.batch_size);
    cell(tr, a.is_arm ? "yes" : "no");
    cell(tr, a.num_observations);
    cell(tr, fmt(a.mean_cost));
    cell(tr, fmt(a.stddev_cost));
    const bar = document.createElement("div");
    bar.className = "bar";
    if (a.mean_cost !== null) {
      const lo = Math.max(0, a.mean_cost - (a.stddev_cost || 0));
      const up = a.mean_cost + (a.stddev_cost || 0);
      const span = document.createElement("i");
      span.style.left = (100 * lo / hi) + "%";
      span.style.width = Math.max(0.5, 100 * (up - lo) / hi) + "%";
      const mean = document.createElement("b");
      mean.style.left = (100 * a.mean_cost / hi) + "%";
      bar.append(span, mean);
    }
    const td = document.createElement("td");
    td.appendChild(bar);
    tr.appendChild(td);
    body.appendChild(tr);
  }
}
function renderTrials(trials) {
  const body = document.querySelector("#trials tbody");
  body.replaceChildren();
  for (const t of trials) {
    const tr = document.createElement("tr");
    tr.className = "trial";
    cell(tr, t.trial_number);
    cell(tr, t.batch_size);
    cell(tr, t.kind === "pruning" ? "pruning round " + t.pruning_round : t.kind);
    cell(tr, t.status.replace("_", " "), "status-" + t.status);
    const ended = t.status === "converged" || t.status === "not_converged";
    cell(tr, ended ? fmt(t.cost) : "–");
    // A dispatched trial has no result yet: dashes, not zeros.
    cell(tr, ended ? t.epochs : "–");
    cell(tr, ended ? fmt(t.time, 2) : "–");
    cell(tr, ended ? fmt(t.energy) : "–");
    cell(tr, ended ? fmt(t.metric, 3) : "–");
    body.appendChild(tr);
  }
}
async function refresh() {
  try {
    const jobs = await getJson("jobs");
    const selected = selectedId(jobs);
    renderJobs(jobs, selected);
    const detail = document.getElementById("detail");
    detail.hidden = selected === null;
    if (selected !== null) {
      const v = await getJson("jobs/" + encodeURIComponent(selected));
      const s = v.job;
      document.getElementById("detail-title").textContent = "Job " + s.job_id;
      document.getElementById("detail-summary").textContent =
          (v.phase === "pruning" ? "pruning, round " + v.pruning_round : "bandit phase") +
          " · η = " + s.eta_knob + " · β = " + (s.beta_knob === null ? "off" : s.beta_knob) +
          " · target metric " + s.target_metric + " · max epochs " + s.max_epochs +
          " · default batch size " + s.default_batch_size + " · max power " + s.max_power + " W";
      renderChart(v.trials);
      renderArms(v.arms);
      renderTrials(v.trials);
    }
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent =
        "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("error").textContent = "Cannot load: " + e.message;
  }
}
window.addEventListener("hashchange", refresh);
refresh();
setInterval(refresh, 5000);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view dashboard_html() { return kPage; }

}  // namespace zeus::server
