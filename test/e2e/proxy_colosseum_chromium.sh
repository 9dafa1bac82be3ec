#!/usr/bin/env bash
# The Colosseum and the live page in a real browser. Two fake OpenAI-compatible servers
# (test/e2e/lib/fake_openai.py) on two fake-NVML GPUs: "small" answers 20 tokens at 2 W per
# token/s, "big" 40 tokens at 4 W per token/s, both in 1 s, so big's answer costs about 220 J
# against small's 100 J. Headless Chromium, driven over the DevTools protocol
# (test/e2e/lib/cdp_browser.py), plays one duel on /zeus/colosseum: prompt, both answers
# streamed with no names shown, the vote for big's answer, the reveal with names, energies and
# "... % more energy" (or "2.2× the energy" from twice the other's on), the "worth it" vote, the
# leaderboard; then opens /zeus/ and finds both answers there. The votes file must hold the duel's
# row, and the --colosseum-log file the duel's state changes in order (then the API duel's, with
# its refused steps). The API's refusals (unknown id, a second vote, an energy vote in the wrong
# state, bad bodies) are clear 4xx answers. A screenshot of the reveal goes to
# $ZEUS_BUILD_DIR/test-output/proxy_colosseum.png, one of the live page to proxy_live.png there.
set -euo pipefail
PROXY_ENV_GPUS=2 source "$(dirname "$0")/lib/proxy_env.sh"
command -v chromium > /dev/null || fail "chromium is not installed; install the Debian package 'chromium'"

"$py" "$lib/fake_openai.py" --gpu 0 --tokens 20 --duration 1 --w-per-token-s 2 \
  > "$dir/small.out" 2> "$dir/small.err" &
pids+=($!)
"$py" "$lib/fake_openai.py" --gpu 1 --tokens 40 --duration 1 --w-per-token-s 4 \
  > "$dir/big.out" 2> "$dir/big.err" &
pids+=($!)
wait_for "$dir/small.out" "port"
wait_for "$dir/big.out" "port"
small=$(sed -n 's/^port //p' "$dir/small.out")
big=$(sed -n 's/^port //p' "$dir/big.out")

"$zeus" proxy --upstream "small=http://127.0.0.1:$small" --gpus small=0 \
  --upstream "big=http://127.0.0.1:$big" --gpus big=1 --port 0 --interval 0.05 \
  --votes "$dir/votes.db" --log "$dir/answers.jsonl" --colosseum-log "$dir/duels.jsonl" \
  > "$dir/proxy.out" 2> "$dir/proxy.err" &
pids+=($!)
wait_for "$dir/proxy.out" "serving"
base=$(sed -n 's|^zeus proxy: serving \(http://127.0.0.1:[0-9]*\) (Colosseum.*|\1|p' "$dir/proxy.out")
[ -n "$base" ] || fail "no URL in: $(cat "$dir/proxy.out")"

out="${ZEUS_BUILD_DIR:-$dir}/test-output"
mkdir -p "$out"
rm -f "$out/proxy_colosseum.png"
seen=$(cd "$lib" && timeout 120 "$py" colosseum_duel.py "$base" "$out/proxy_colosseum.png" \
  "$out/proxy_live.png") \
  || fail "the browser run failed: $(tail -5 "$dir/proxy.err")"
echo "$seen"
check() { "$py" -c "import json,sys; s=json.loads(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$seen" \
  || fail "$1: $seen"; }
check "anonymous while streaming" 's["names_before_vote"] == ["Model A", "Model B"]'
check "both answers streamed whole" 'sorted(len(a.split()) for a in s["answers"]) == [20, 40]'
check "the names revealed after the vote" 'sorted(n.split(": ")[1] for n in s["names_after_vote"]) == ["big", "small"]'
check "the winner is big" 's["names_after_vote"][s["voted"]].endswith("big")'
check "energies shown with tokens" 'all(" J, " in e and "tokens" in e for e in s["energies"])'
check "the reveal sentence" 's["reveal"].startswith("That answer used ") and ("% more energy" in s["reveal"] or "× the energy" in s["reveal"])'
# The percentage (under twice the other's energy) or the ratio (from twice on) is the one of the
# two energies it names (about 2.2×: 220 J vs 100 J; each answer streams for its 1 s, longer on a
# loaded machine, so the energies are checked in wide bands).
"$py" - "$seen" <<'PY' || fail "the reveal's percentage and energies (about 220 J vs 100 J): $seen"
import json, re, sys
reveal = json.loads(sys.argv[1])["reveal"]
m = re.search(r"used (\d+) % more energy \(([\d.]+) J vs ([\d.]+) J\)", reveal)
r = re.search(r"used ([\d.]+)× the energy \(([\d.]+) J vs ([\d.]+) J\)", reveal)
assert m or r, reveal
if m:
    percent, big, small = int(m[1]), float(m[2]), float(m[3])
    assert abs(percent - round(100 * (big / small - 1))) <= 1 and big <= 2.01 * small, reveal
else:
    ratio, big, small = float(r[1]), float(r[2]), float(r[3])
    assert abs(ratio - big / small) <= 0.06 and big >= 1.99 * small, reveal
assert 190 <= big <= 330 and 85 <= small <= 165, reveal
PY
check "the state machine" 's["state"] == "chose_more_energy_response" and s["worth_shown"]'
check "the leaderboard" 's["leaderboard"][0][:3] == ["big", "1", "100 %"] and s["leaderboard"][0][5] == "100 % of 1" and s["leaderboard"][1][:3] == ["small", "1", "0 %"]'
check "no error on the page" 's["error"] == "" and s["error_after_answers"] == "" and s["live_error"] == ""'
check "the live page's models" 'sorted(m[0] for m in s["live_models"]) == ["big", "small"] and s["live_finished"] == "2"'
check "the live page's request spans" 's["live_spans"] == 2'
# The legend names each upstream's GPUs, not "power of proxy".
check "the live page's legend" 'sorted(s["live_legend"])[:2] == ["— power of big: GPU 1", "— power of small: GPU 0"] and not any("proxy" in t for t in s["live_legend"])'
for png in proxy_colosseum proxy_live; do
  [ "$(head -c 4 "$out/$png.png" | od -An -c | tr -d ' ')" = '211PNG' ] \
    || fail "the screenshot $png.png is not a PNG"
done

# The SQLite row: the models on each side, their energies (big about 220 J, small about 100 J:
# idle 60 W plus the fake's power model for 1 s), the vote for big, worth it.
row=$("$py" - "$dir/votes.db" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT model_0, model_1, energy_0_j, energy_1_j, tokens_0, tokens_1, victory_index, is_worth "
    "FROM duels").fetchall()
assert len(rows) == 1, rows
m0, m1, e0, e1, t0, t1, won, worth = rows[0]
e = {m0: e0, m1: e1}
t = {m0: t0, m1: t1}
assert [m0, m1][won] == "big", rows
assert worth == 1, rows
assert t == {"big": 40, "small": 20}, rows
# A loaded machine stretches each answer's wall time (and the idle 60 W in it): bounds, not points.
assert 200 <= e["big"] <= 320 and 90 <= e["small"] <= 160 and e["big"] > 1.5 * e["small"], rows
print("row ok: big %.1f J, small %.1f J" % (e["big"], e["small"]))
PY
) || fail "the votes table: $row"
echo "$row"
"$py" - "$dir/answers.jsonl" "$dir/votes.db" <<'PY' || fail "the --log rows: $(cat "$dir/answers.jsonl")"
import json, sqlite3, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert sorted(r["model"] for r in rows) == ["big", "small"], rows
m0, m1, e0, e1 = sqlite3.connect(sys.argv[2]).execute(
    "SELECT model_0, model_1, energy_0_j, energy_1_j FROM duels").fetchone()
logged = {r["model"]: r["energy_j"] for r in rows}
assert abs(logged[m0] - e0) < 1e-6 and abs(logged[m1] - e1) < 1e-6, (logged, e0, e1)
PY

# The API's refusals: clear 4xx answers with a message; the proxy keeps serving.
code() { curl -s -o "$dir/body" -w '%{http_code}' "$@"; }
post() { code -X POST -H 'Content-Type: application/json' -d "$2" "$base$1"; }
expect() {  # status route body message-part
  local got
  got=$(post "$2" "$3")
  [ "$got" = "$1" ] || fail "$2 $3: expected $1, got $got: $(cat "$dir/body")"
  grep -q "$4" "$dir/body" || fail "$2 $3: the message lacks '$4': $(cat "$dir/body")"
}
expect 404 /response_vote '{"request_id": "nope", "victory_index": 0}' "unknown request_id"
expect 400 /response_vote '{"request_id": "x", "victory_index": 2}' "victory_index must be 0 or 1"
expect 400 /prompt '{"request_id": "x", "prompt": "hi"}' "model_index must be 0 or 1"
expect 400 /prompt '{"request_id": "x", "prompt": "hi", "model_index": 0, "temp": 1}' "unknown field 'temp'"
expect 400 /energy_vote 'not json' "JSON object"
# A duel by the API: answered, voted for small (less energy), then a second vote and an energy
# vote are refused.
curls=()
for side in 0 1; do
  curl -s -X POST -d "{\"request_id\": \"api\", \"prompt\": \"hi\", \"model_index\": $side}" \
    "$base/prompt" > "$dir/side$side" &
  curls+=($!)
done
wait "${curls[@]}"
expect 409 /prompt '{"request_id": "api", "prompt": "hi", "model_index": 0}' "prompted already"
small_side=$("$py" -c "import sys; print(0 if open(sys.argv[1], 'rb').read().count(b'\0') == 20 else 1)" "$dir/side0")
got=$(post /response_vote "{\"request_id\": \"api\", \"victory_index\": $small_side}")
[ "$got" = 200 ] || fail "the API duel's vote: $got $(cat "$dir/body")"
grep -q '"state":"chose_less_energy_response"' "$dir/body" || fail "the API duel's state: $(cat "$dir/body")"
expect 409 /response_vote "{\"request_id\": \"api\", \"victory_index\": 0}" "one vote per duel"
expect 409 /energy_vote '{"request_id": "api", "is_worth": true}' "no extra energy"
[ "$(code "$base/zeus/leaderboard")" = 200 ] || fail "the leaderboard route"
grep -q '"duels":2' "$dir/body" || fail "the leaderboard after two duels: $(cat "$dir/body")"
# The duel log (--colosseum-log): per duel, its state changes in order, the refused steps with
# the state unchanged; the browser duel's revealed energies are the stored ones.
"$py" - "$dir/duels.jsonl" "$dir/votes.db" <<'PY' || fail "the duel log: $(cat "$dir/duels.jsonl")"
import datetime, json, sqlite3, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
for l in lines:
    t = datetime.datetime.strptime(l["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    assert abs(t.timestamp() - l["unix_s"]) < 0.002, l
assert [l["unix_s"] for l in lines] == sorted(l["unix_s"] for l in lines), lines
duels = {}
for l in lines:
    duels.setdefault(l["request_id"], []).append(l)
steps = lambda rid: [(l["event"], l.get("action"), l["prev_state"], l["state"], l.get("status")) for l in duels.pop(rid)]
assert steps("nope") == [("abnormal", "response_vote", None, None, 404)], lines
assert steps("api") == [
    ("state", "prompt", None, "prompted", None),
    ("abnormal", "prompt", "prompted", "prompted", 409),
    ("state", "response_vote", "prompted", "chose_less_energy_response", None),
    ("abnormal", "response_vote", "chose_less_energy_response", "chose_less_energy_response", 409),
    ("abnormal", "energy_vote", "chose_less_energy_response", "chose_less_energy_response", 409),
], lines
assert len(duels) == 1, duels  # the browser's duel
[(rid, played)] = duels.items()
assert [(l["event"], l["prev_state"], l["state"]) for l in played] == [
    ("state", None, "prompted"),
    ("state", "prompted", "chose_more_energy_response"),
    ("state", "chose_more_energy_response", "voted_energy"),
], played
vote = played[1]
m0, m1, e0, e1, won = sqlite3.connect(sys.argv[2]).execute(
    "SELECT model_0, model_1, energy_0_j, energy_1_j, victory_index FROM duels WHERE request_id = ?",
    (rid,)).fetchone()
assert vote["models"] == [m0, m1] and vote["victory_index"] == won, (vote, m0, m1, won)
assert abs(vote["energy_consumptions"][0] - e0) < 1e-6 and abs(vote["energy_consumptions"][1] - e1) < 1e-6, vote
assert vote["models"][won] == "big" and sorted(vote["tokens"]) == [20, 40], vote
assert played[2]["is_worth"] is True, played
print("duel log ok: %d lines" % len(lines))
PY
# A second Colosseum on the same votes file starts its leaderboard from the stored duels (it
# keeps per-model sums, updated as votes come, instead of reading every duel per request).
"$zeus" proxy --upstream "small=http://127.0.0.1:$small" --gpus small=0 \
  --upstream "big=http://127.0.0.1:$big" --gpus big=1 --port 0 --votes "$dir/votes.db" \
  > "$dir/again.out" 2> "$dir/again.err" &
pids+=($!)
wait_for "$dir/again.out" "serving"
again=$(sed -n 's|^zeus proxy: serving \(http://127.0.0.1:[0-9]*\) (Colosseum.*|\1|p' "$dir/again.out")
[ "$(code "$again/zeus/leaderboard")" = 200 ] && grep -q '"duels":2' "$dir/body" \
  && grep -q '"worth":1' "$dir/body" || fail "the stored votes' leaderboard: $(cat "$dir/body")"
[ "$(code "$base/models")" = 200 ] && grep -q '"available_models":\["small","big"\]' "$dir/body" \
  || fail "GET /models: $(cat "$dir/body")"

# A side whose server is down: its /prompt is a 502 that says so, the other side still answers,
# and the duel cannot be voted on.
"$zeus" proxy --upstream "small=http://127.0.0.1:$small" --gpus small=0 \
  --upstream "down=http://127.0.0.1:1" --gpus down=1 --port 0 > "$dir/down.out" 2> "$dir/down.err" &
pids+=($!)
wait_for "$dir/down.out" "serving"
down=$(sed -n 's|^zeus proxy: serving \(http://127.0.0.1:[0-9]*\) (Colosseum.*|\1|p' "$dir/down.out")
statuses=""
for side in 0 1; do
  statuses+=$(curl -s -o "$dir/down$side" -w '%{http_code} ' -X POST \
    -d "{\"request_id\": \"d1\", \"prompt\": \"hi\", \"model_index\": $side}" "$down/prompt")
done
[ "$(tr ' ' '\n' <<< "$statuses" | sort | tr '\n' ' ')" = " 200 502 " ] || fail "one side down: $statuses"
grep -q "down's server did not answer" "$dir/down0" "$dir/down1" || fail "the 502's message: $(cat "$dir/down0" "$dir/down1")"
[ "$(code -X POST -d '{"request_id": "d1", "victory_index": 0}' "$down/response_vote")" = 409 ] \
  && grep -q "failed" "$dir/body" || fail "a vote on a failed duel: $(cat "$dir/body")"

# The live page of a plain proxy (one upstream): a finished request shows in its state and its
# event stream; /zeus/ is the proxy's own, not forwarded.
"$zeus" proxy --upstream "http://127.0.0.1:$small" --gpus 0 --port 0 --interval 0.05 \
  > "$dir/plain.out" 2> "$dir/plain.err" &
pids+=($!)
wait_for "$dir/plain.out" "serving"
plain=$(sed -n 's|^zeus proxy: serving \(http://127.0.0.1:[0-9]*\) in front.*|\1|p' "$dir/plain.out")
curl -s -X POST -d '{"model": "m1", "duration_s": 0.2}' "$plain/v1/completions" > /dev/null
[ "$(code "$plain/zeus/state")" = 200 ] || fail "GET /zeus/state: $(cat "$dir/body")"
"$py" - "$dir/body" <<'PY' || fail "the plain proxy's live state: $(cat "$dir/body")"
import json, sys
s = json.load(open(sys.argv[1]))
[r] = s["requests"]
assert r["model"] == "m1" and r["end_s"] > r["start_s"] and r["energy_j"] > 0 and r["tokens"] == 20, r  # the fake answers 20
assert s["models"]["m1"]["requests"] == 1 and s["sources"][0]["gpus"] == "GPU 0", s
PY
timeout 3 curl -s -N "$plain/zeus/events" > "$dir/events" || true
head -1 "$dir/events" | grep -q '^event: snapshot' || fail "/zeus/events: $(head -c 300 "$dir/events")"
grep -q '"model":"m1"' "$dir/events" || fail "/zeus/events lacks the request: $(head -c 300 "$dir/events")"
[ "$(code "$plain/zeus")" = 301 ] || fail "GET /zeus does not redirect to /zeus/"
[ "$(code -X POST -d '{}' "$plain/zeus/")" = 405 ] || fail "POST /zeus/ is not 405"
[ "$(code "$plain/zeus/")" = 200 ] && grep -q "zeus proxy: live" "$dir/body" || fail "GET /zeus/"

# Models named like Object's own properties are models like any other on the
# live page (they arrive while the page is open, through its event stream), and none of them
# writes to Object.prototype.
"$py" - "$plain" "$lib" <<'PY' || fail "models named like Object's properties on the live page"
import json, sys, urllib.request
sys.path.insert(0, sys.argv[2])
from cdp_browser import Browser
with Browser() as b:
    b.open(sys.argv[1] + "/zeus/")
    b.wait_for("document.querySelectorAll('#models tbody tr').length == 1", 20)  # m1
    for model in ("__proto__", "toString", "constructor"):
        body = json.dumps({"model": model, "duration_s": 0.05}).encode()
        urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/v1/completions", body),
                               timeout=20).read()
    b.wait_for("document.querySelectorAll('#models tbody tr').length >= 4", 20)
    names = b.evaluate("[...document.querySelectorAll('#models tbody tr td:first-child')]"
                       ".map(t => t.textContent).sort().join(' ')")
    polluted = b.evaluate("({}).requests !== undefined")
assert names == "__proto__ constructor m1 toString", names
assert polluted is False, "Object.prototype was written"
PY

# Option mistakes: refused at start with the fix, nothing served.
echo "not a database, not at all, nothing like one, only text in a file" > "$dir/notes.txt"
refuse() {  # message-part args...
  local part=$1
  shift
  if timeout 10 "$zeus" proxy --port 0 "$@" > "$dir/refused.out" 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$part" "$dir/refused.out" || fail "$*: the message lacks '$part': $(cat "$dir/refused.out")"
}
refuse "need names" --upstream http://127.0.0.1:1 --upstream http://127.0.0.1:2
refuse "no upstream is named 'c'" --upstream a=http://127.0.0.1:1 --upstream b=http://127.0.0.1:2 --gpus c=0
refuse "overlap" --upstream a=http://127.0.0.1:1 --upstream b=http://127.0.0.1:2 --gpus a=0
refuse "give --votes a new file" --upstream a=http://127.0.0.1:1 --upstream b=http://127.0.0.1:2 \
  --gpus a=0 --gpus b=1 --votes "$dir/notes.txt"
refuse "only the Colosseum" --upstream http://127.0.0.1:1 --votes "$dir/v.db"
refuse "different names" --upstream a=http://127.0.0.1:1 --upstream a=http://127.0.0.1:2
refuse "not 3" --upstream a=http://x:1 --upstream b=http://y:1 --upstream c=http://z:1
echo "proxy_colosseum_chromium: ok, screenshot $out/proxy_colosseum.png"
