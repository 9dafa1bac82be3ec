#!/usr/bin/env bash
# Two `zeus serve` replicas on one PostgreSQL database, 32 client threads (zeus_load) running
# whole job lifecycles on 4 jobs through both. Then: trial numbers are unique and dense, every
# answered report is stored, no pruning slot is explored twice, nothing is left dispatched, and
# each batch size's belief shown by GET /jobs/{id} equals a replay of the stored history.
# Needs the ctest fixture "pg" (a private PostgreSQL cluster).
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
trap 'stop_servers; drop_pg_databases; rm -rf "$dir"' EXIT

db=$(pg_database "zeus_e2e_replicas_$$")
start_server a "$db" 0 --workers 24
start_server b "$db" 0 --workers 24
echo "replicas: ${server_url[a]} ${server_url[b]} on ${db}"

"$zeus_load" --url "${server_url[a]},${server_url[b]}" --threads 32 --jobs 4 --lifecycles 4 \
  --log "$dir/answered.jsonl" || fail "zeus_load reported errors (above)"
python3 "$checker" --strict --log "$dir/answered.jsonl" --db "$db" --server "${server_url[b]}" ||
  fail "the database does not match what the clients were answered (above)"
# Both replicas answered (the load was spread), and the other replica shows the same beliefs.
python3 "$checker" --strict --log "$dir/answered.jsonl" --db "$db" --server "${server_url[a]}" \
  > /dev/null || fail "replica a shows other beliefs than replica b"
echo "PASS"
