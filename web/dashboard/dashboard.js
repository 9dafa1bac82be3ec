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
