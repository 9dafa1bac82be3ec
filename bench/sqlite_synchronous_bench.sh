#!/usr/bin/env bash
# bench/sqlite_synchronous_bench.sh: what SQLite's synchronous=FULL costs `zeus serve` against
# NORMAL. NORMAL (WAL): an answered report survives kill -9 but the newest ones may be lost on
# power loss; FULL: each commit is also flushed to the disk (once per group of concurrent
# requests, which the store commits together). The load is bench/http_bench.sh's: zeus_load's
# keep-alive clients running job lifecycles on 8 jobs, counted in next+report pairs per second.
# At each number of clients the two modes alternate, --rounds times, each on a fresh file in
# --dir; then FULL/NORMAL per round and the rule for the default: FULL must keep at least 100x
# the original Python server's throughput (17/29/25 pairs/s at 1/8/32 clients, so 1,700/2,900/
# 2,500; 2,500 at 256 too).
#
#   bench/sqlite_synchronous_bench.sh [--clients "1 8 32 256"] [--seconds 5] [--rounds 3]
#       [--dir DIR] [--zeus PATH]
# --dir: where the SQLite files go (default: a new folder under TMPDIR); put it on the disk a
# service would use — on tmpfs a flush costs nothing and the comparison means nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ZEUS=$ROOT/build/release/bin/zeus
LOAD=$ROOT/build/release/bin/zeus_load
CLIENTS="1 8 32 256"
SECONDS_EACH=5
ROUNDS=3
DIR=""
while [ $# -gt 0 ]; do
  case $1 in
    --clients) CLIENTS=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --zeus) ZEUS=$2; shift 2 ;;
    *) echo "usage: $0 [--clients LIST] [--seconds S] [--rounds N] [--dir DIR] [--zeus PATH]" >&2
       exit 2 ;;
  esac
done
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
DIR=${DIR:-$WORK}
mkdir -p "$DIR"
source "$ROOT/bench/serve_bench_lib.sh"

echo "SQLite files in $DIR ($(df -T "$DIR" | awk 'NR == 2 {print $2}')), $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), $SECONDS_EACH s per run"
results=$WORK/results.jsonl
for c in $CLIENTS; do
  for round in $(seq "$ROUNDS"); do
    for mode in normal full; do
      rm -f "$DIR"/synchronous_bench.db*
      serve "$ZEUS" "sqlite://$DIR/synchronous_bench.db?synchronous=$mode"
      result=$(load "$c" 8 "s$c$mode$round")
      stop_server
      echo "clients=$c round $round synchronous=$mode: $(summary "$result")"
      echo "{\"clients\": $c, \"round\": $round, \"mode\": \"$mode\", \"load\": ${result:-null}}" \
        >> "$results"
    done
  done
done
rm -f "$DIR"/synchronous_bench.db*

/usr/bin/python3 - "$results" <<'PY'
import collections, json, sys
rule = {1: 1700, 8: 2900, 32: 2500, 256: 2500}  # 100x the original server (17/29/25 pairs/s)
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    pairs = r["load"]["requests_per_s"] / 2 if r["load"] else 0.0
    runs[r["clients"]].setdefault(r["round"], {})[r["mode"]] = pairs
print("\nclients  NORMAL pairs/s (each round)   FULL pairs/s (each round)     FULL/NORMAL    rule")
met_everywhere = True
for c in sorted(runs):
    rounds = [runs[c][k] for k in sorted(runs[c])]
    normal = [r.get("normal", 0.0) for r in rounds]
    full = [r.get("full", 0.0) for r in rounds]
    ratios = [f / n if n else 0.0 for f, n in zip(full, normal)]
    need = rule.get(c)
    verdict = "-" if need is None else ("met" if min(full) >= need else "NOT met") + f" (>= {need})"
    if need is not None and min(full) < need:
        met_everywhere = False
    print(f"{c:7d}  {' '.join(f'{x:6.0f}' for x in normal):28s}  "
          f"{' '.join(f'{x:6.0f}' for x in full):28s}  "
          f"{' '.join(f'{x:4.2f}' for x in ratios):13s}  {verdict}")
print("\nFULL keeps >= 100x the original server at every level measured (every round):",
      "yes" if met_everywhere else "no")
PY
