#!/usr/bin/env bash
# With its PostgreSQL server stopped, `zeus serve` answers /healthz — and every
# other route that needs the store — 503 with the same clear message, "cannot connect to
# <database URL>: …; check that the server runs …" (the URL itself only in the server's log: an
# HTTP answer names none), never an empty job name ("reading job ''") or libpqxx's
# internal wording ("Could not obtain client encoding: not connected"). The server is stopped
# while the pool holds connections it then finds closed. Needs PostgreSQL (a private cluster of
# its own, stopped by the test; scripts/pg_cluster.sh).
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
trap 'stop_servers; bash "$ZEUS_SOURCE_DIR/scripts/pg_cluster.sh" stop "$dir/pg" || true; rm -rf "$dir"' EXIT

db=$(bash "$ZEUS_SOURCE_DIR/scripts/pg_cluster.sh" start "$dir/pg" | tail -1)
start_server a "$db" 0 --workers 4
url=${server_url[a]}

answer() {  # answer METHOD PATH [BODY] -> "STATUS BODY"
  curl -s -m 20 -X "$1" -w ' %{http_code}' ${3:+-H 'Content-Type: application/json' -d "$3"} \
    "$url$2" | sed -E 's/^(.*) ([0-9]{3})$/\2 \1/'
}

[[ $(answer GET /healthz) == 200* ]] || fail "/healthz before the stop: $(answer GET /healthz)"
# Four clients at once, so that the pool holds several connections when the server goes away.
"$zeus_load" --url "$url" --threads 4 --jobs 2 --lifecycles 1 > /dev/null ||
  fail "zeus_load failed before the stop"

bash "$ZEUS_SOURCE_DIR/scripts/pg_cluster.sh" stop "$dir/pg"

check() {  # check METHOD PATH [BODY]: 503 with the clear message
  local got
  got=$(answer "$@")
  [[ $got == 503* ]] || fail "$1 $2 with the server stopped: expected 503, got: $got"
  [[ $got == *"cannot connect to <database URL>"*"check that the server runs"* ]] ||
    fail "$1 $2 with the server stopped: not the clear message: $got"
  [[ $got != *"$db"* && $got != *"://"* ]] || fail "$1 $2: the answer quotes a URL: $got"
  for bad in "job ''" "client encoding" "not connected."; do
    [[ $got != *"$bad"* ]] || fail "$1 $2 with the server stopped says \"$bad\": $got"
  done
}
# /healthz reports the newest ping of the server's health probe (one a second): wait for it.
for _ in $(seq 50); do [[ $(answer GET /healthz) == 503* ]] && break; sleep 0.1; done
# More requests than the pool has connections: each closed one is met once.
for _ in 1 2 3 4 5 6; do check GET /healthz; done
check GET /jobs
check GET "/jobs/batch_size?job_id=load-0"
check POST /jobs '{"job_id_prefix":"p","batch_sizes":[8,16],"default_batch_size":8,"eta_knob":0.5,"beta_knob":2,"target_metric":0.5,"max_epochs":3,"max_power":300,"number_of_gpus":1,"gpu_model":"x"}'
check GET /healthz
echo "PASS"
