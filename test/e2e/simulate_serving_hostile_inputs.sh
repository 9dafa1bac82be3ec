#!/usr/bin/env bash
# zeus simulate serving never aborts on a small hostile input: a trace whose two requests are
# weeks apart replays in bounded time and memory (every control period is still a tick, but the
# timelines are bounded), and one spanning a year, past a month, is refused naming the span; a
# profile's clocks, powers and coefficients are validated with the field named (an ascending
# clock list is sorted, so the "max-clock" row runs at the highest clock); a trace without a
# TPOT names --tpot-slo; fractional token counts are refused. Every run under a 2 GB
# address-space limit, with a one-line error.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
cd "$dir"
/usr/bin/python3 - <<'PY'
import json
rows = lambda *r: "TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join("%s,%s,%s\n" % x for x in r)
open("weeks.csv", "w").write(rows(("2023-01-01 00:00:00", 100, 10), ("2023-01-20 00:00:00", 100, 10)))
open("year.csv", "w").write(rows(("2023-01-01 00:00:00", 100, 10), ("2024-01-01 00:00:00", 100, 10)))
open("onetoken.csv", "w").write(rows(("2023-01-01 00:00:00", 100, 1), ("2023-01-01 00:00:01", 50, 0)))
open("fraction.csv", "w").write(rows(("2023-01-01 00:00:00", 100.9, 10.9)))
base = {"clocks_mhz": [1980, 1830, 1680, 1530, 1380, 1230, 1080, 930], "prefill_s_per_token": 3e-5,
        "decode_s_per_seq": 3.2e-5, "memory_s": 5e-3, "kv_s_per_token": 4e-8, "base_w": 150,
        "compute_w": 500, "memory_w": 250, "idle_w": 90, "prefill_chunk_tokens": 2048}
def w(name, **changes):
    p = dict(base); p.update(changes)
    json.dump({"format": "zeus-serving-profile/1", "gpu": "x", "profile": p}, open(name + ".json", "w"))
w("ascending", clocks_mhz=sorted(base["clocks_mhz"]))
w("zero_clock", clocks_mhz=[1980, 0]); w("tiny_clock", clocks_mhz=[1980, 1e-300])
w("huge_clock", clocks_mhz=[1e300, 1980]); w("duplicates", clocks_mhz=[1980] * 5)
w("many_clocks", clocks_mhz=list(range(100000, 0, -1))); w("negative_idle", idle_w=-1e6)
w("huge_idle", idle_w=1e308); w("huge_chunk", prefill_chunk_tokens=1e300)
w("huge_coeff", memory_s=1e300)
PY
run() {  # EXPECT(ok|refused) PATTERN ARGS...: within 60 s, under 2 GB, no abort
  local expect=$1 pattern=$2 status=0
  shift 2
  (ulimit -v 2000000; timeout 60 "$ZEUS" simulate serving "$@") > out.txt 2> err.txt || status=$?
  [ "$status" != 124 ] || fail "simulate serving $* ran past 60 s"
  [ "$status" -lt 128 ] || fail "simulate serving $* died of signal $((status - 128)): $(tail -3 err.txt)"
  if [ "$expect" = ok ]; then
    [ "$status" = 0 ] || fail "simulate serving $* exited $status: $(cat err.txt)"
    grep -q -- "$pattern" out.txt || fail "simulate serving $*: no '$pattern' in: $(cat out.txt)"
  else
    [ "$status" != 0 ] || fail "simulate serving $* was accepted"
    [ "$(wc -l < err.txt)" = 1 ] || fail "simulate serving $*: more than one line: $(cat err.txt)"
    grep -q -- "$pattern" err.txt || fail "simulate serving $*: $(cat err.txt)"
  fi
}
run ok "^governor " --trace weeks.csv
run refused "span 365.0" --trace year.csv
run refused "give --tpot-slo" --trace onetoken.csv
run refused "whole numbers" --trace fraction.csv
run ok "^max-clock .*1980" --serving-profile ascending.json
run refused "clocks_mhz\[1\]" --serving-profile zero_clock.json
run refused "clocks_mhz\[1\]" --serving-profile tiny_clock.json
run refused "clocks_mhz\[0\]" --serving-profile huge_clock.json
run refused "not below the clock before it" --serving-profile duplicates.json
run refused "100000 clocks" --serving-profile many_clocks.json
run refused "idle_w is -1000000" --serving-profile negative_idle.json
run refused "idle_w is" --serving-profile huge_idle.json
run refused "prefill_chunk_tokens" --serving-profile huge_chunk.json
run refused "memory_s" --serving-profile huge_coeff.json
echo "simulate serving, hostile inputs: ok"
