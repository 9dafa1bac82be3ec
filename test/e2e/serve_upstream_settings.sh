#!/usr/bin/env bash
# `zeus serve` started as upstream's BSO server is (issue 37): ZEUS_BSO_DATABASE_URL in
# SQLAlchemy's form and ZEUS_BSO_SERVER_PORT from a .env file and the environment, each said at
# start with its origin; an upstream client (HTTP) registers a job; a bad setting stops it with
# the setting named and no password shown.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/serve.out" ] && cat "$dir/serve.out" "$dir/serve.err" >&2; exit 1; }
unset ZEUS_BSO_DATABASE_URL ZEUS_BSO_SERVER_PORT ZEUS_BSO_LOG_LEVEL ZEUS_BSO_ECHO_SQL

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/site/run"
cat > "$dir/site/.env" <<ENV
# as upstream's docs write it
ZEUS_BSO_DB_USER="me"
ZEUS_BSO_SERVER_PORT=$port
ZEUS_BSO_LOG_LEVEL="INFO"
ZEUS_BSO_ECHO_SQL="True"
ENV
# The .env is found from a folder below it; the URL (SQLAlchemy: relative to the working
# directory) comes from the environment.
(cd "$dir/site/run" && ZEUS_BSO_DATABASE_URL="sqlite+aiosqlite:///bso.db" exec "$zeus" serve \
  > "$dir/serve.out" 2> "$dir/serve.err") &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/serve.out" 2>/dev/null && break; sleep 0.05; done
grep -q "zeus serve: listening on http://127.0.0.1:$port (store sqlite://bso.db)" "$dir/serve.out" || fail "not on ZEUS_BSO_SERVER_PORT $port"
grep -q "upstream settings: database sqlite+aiosqlite:///bso.db, here sqlite://bso.db from ZEUS_BSO_DATABASE_URL; port $port from ZEUS_BSO_SERVER_PORT in $dir/site/.env; log level INFO from ZEUS_BSO_LOG_LEVEL in $dir/site/.env" "$dir/serve.out" \
  || fail "the origins are not said"
grep -q "ZEUS_BSO_ECHO_SQL" "$dir/serve.err" || fail "ZEUS_BSO_ECHO_SQL=True is not said to be ignored"
code=$(curl -s -o "$dir/body" -w '%{http_code}' -X POST "http://127.0.0.1:$port/jobs" \
  -H 'Content-Type: application/json' \
  -d '{"job_id": "upstream-settings", "job_id_prefix": "upstream", "batch_sizes": [32, 64], "default_batch_size": 32, "target_metric": 0.5, "max_epochs": 10, "beta_knob": 2.0, "eta_knob": 0.5, "mab_prior_mean": 0, "mab_prior_precision": 0, "mab_num_explorations": 2, "mab_seed": 1, "window_size": 0, "max_power": 300, "number_of_gpus": 1, "gpu_model": "A100"}')
[ "$code" = 201 ] || [ "$code" = 200 ] || fail "register over HTTP answered $code: $(cat "$dir/body")"
test -s "$dir/site/run/bso.db" || fail "the SQLite file is not bso.db in the working directory"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

# A flag wins over the setting, and says so.
(cd "$dir/site/run" && exec "$zeus" serve --port 0 > "$dir/serve.out" 2> "$dir/serve.err") &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/serve.out" 2>/dev/null && break; sleep 0.05; done
grep -q "listening on" "$dir/serve.out" || fail "did not start with --port 0"
grep -q "ZEUS_BSO_SERVER_PORT ($dir/site/.env\|ZEUS_BSO_SERVER_PORT (ZEUS_BSO_SERVER_PORT in $dir/site/.env) is not used: --port was given" "$dir/serve.err" \
  || fail "the unused setting is not said"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

# Bad settings: named, nothing started, no password shown.
for url in "mysql+asyncmy://me:hunter2@127.0.0.1:1/Zeus" "oracle://me:hunter2@db/Zeus" \
           "postgresql+asyncpg://me:hunter2@127.0.0.1:1/Zeus"; do
  set +e
  (cd "$dir" && ZEUS_BSO_DATABASE_URL="$url" timeout 30 "$zeus" serve --port 0 > "$dir/bad.out" 2> "$dir/bad.err")
  rc=$?
  set -e
  [ "$rc" != 0 ] || fail "$url: started"
  grep -q "hunter2" "$dir/bad.out" "$dir/bad.err" && fail "$url: the password is shown: $(cat "$dir/bad.err")"
  grep -q "me:\*\*\*@" "$dir/bad.err" || fail "$url: the URL is not shown redacted: $(cat "$dir/bad.err")"
done
grep -q "Zeus" "$dir/bad.err"
echo "PASS: zeus serve with upstream's settings"
