"use strict";
const $ = id => document.getElementById(id);
let duel = null;  // {id, done: [bool, bool], ok: [bool, bool]}
function error(text) { $("error").textContent = text; }
async function post(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                               body: JSON.stringify(body)});
  const doc = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(doc.message || (path + ": HTTP " + r.status));
  return doc;
}
// One side's answer: JSON-encoded text chunks, each followed by a NUL byte.
async function stream(side, prompt) {
  const box = document.querySelector("#side-" + side + " .answer");
  const r = await fetch("/prompt", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({request_id: duel.id, prompt: prompt, model_index: side})});
  if (!r.ok) {
    const doc = await r.json().catch(() => ({}));
    throw new Error(doc.message || "/prompt: HTTP " + r.status);
  }
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, {stream: true});
    let nul;
    while ((nul = buffered.indexOf("\0")) >= 0) {
      box.textContent += JSON.parse(buffered.slice(0, nul));
      buffered = buffered.slice(nul + 1);
    }
  }
  duel.done[side] = true;
  box.parentElement.classList.add("answered");
}
async function send() {
  const prompt = $("prompt").value.trim();
  if (!prompt) { error("Write a prompt first."); return; }
  error("");
  duel = {id: "duel-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2),
          done: [false, false]};
  for (const side of [0, 1]) {
    const s = $("side-" + side);
    s.classList.remove("chosen", "answered");
    s.querySelector(".name").textContent = side === 0 ? "Model A" : "Model B";
    s.querySelector(".answer").textContent = "";
    s.querySelector(".energy").textContent = "";
  }
  $("reveal").textContent = ""; $("thanks").textContent = ""; $("worth").hidden = true;
  $("send").disabled = true; $("vote-0").disabled = true; $("vote-1").disabled = true;
  $("phase").textContent = "Both models are answering…";
  try {
    await Promise.all([stream(0, prompt), stream(1, prompt)]);
    $("phase").textContent = "Which answer is better?";
    $("vote-0").disabled = false; $("vote-1").disabled = false;
  } catch (e) {
    error(e.message);
    $("phase").textContent = "";
  }
  $("send").disabled = false;
}
async function vote(side) {
  $("vote-0").disabled = true; $("vote-1").disabled = true;
  try {
    const r = await post("/response_vote", {request_id: duel.id, victory_index: side});
    for (const s of [0, 1]) {
      const box = $("side-" + s);
      box.querySelector(".name").textContent = (s === 0 ? "A: " : "B: ") + r.model_names[s];
      box.querySelector(".energy").textContent = r.energy_consumptions[s].toFixed(1) + " J, " +
        r.tokens[s] + " tokens (" + (r.energy_consumptions[s] / Math.max(1, r.tokens[s])).toFixed(3) +
        " J/token)";
    }
    $("side-" + side).classList.add("chosen");
    $("reveal").textContent = r.message;
    $("reveal").dataset.state = r.state;
    $("phase").textContent = "Revealed.";
    if (r.state === "chose_more_energy_response") $("worth").hidden = false;
    else $("thanks").textContent = "Thanks for voting!";
    leaderboard();
  } catch (e) { error(e.message); }
}
async function worth(isWorth) {
  $("worth").hidden = true;
  try {
    await post("/energy_vote", {request_id: duel.id, is_worth: isWorth});
    $("thanks").textContent = "Thanks! Your energy vote was counted.";
    leaderboard();
  } catch (e) { error(e.message); }
}
async function leaderboard() {
  try {
    const r = await fetch("/zeus/leaderboard");
    const doc = await r.json();
    const body = document.querySelector("#leaderboard tbody");
    body.replaceChildren();
    for (const m of doc.models) {
      const tr = document.createElement("tr");
      tr.className = "model";
      tr.dataset.model = m.model;
      tr.dataset.duels = m.duels;
      for (const c of [m.model, m.duels, (100 * m.win_rate).toFixed(0) + " %",
                       m.energy_per_answer_j.toFixed(1), m.energy_per_token_j.toFixed(3),
                       m.worth_rate == null || m.worth_rate < 0 ? "–" : (100 * m.worth_rate).toFixed(0) + " % of " +
                         m.energy_votes]) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("no-votes").hidden = doc.models.length > 0;
  } catch (e) { error("leaderboard: " + e.message); }
}
$("send").onclick = send;
$("vote-0").onclick = () => vote(0);
$("vote-1").onclick = () => vote(1);
$("worth-yes").onclick = () => worth(true);
$("worth-no").onclick = () => worth(false);
leaderboard();
