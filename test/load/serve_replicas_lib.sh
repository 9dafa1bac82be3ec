# replicas_run DB_URL: two `zeus serve` replicas on one database, 32 client threads (zeus_load)
# running whole job lifecycles on 4 jobs through both. Then: trial numbers are unique and dense,
# every answered report is stored, no pruning slot is explored twice, nothing is left dispatched,
# and each batch size's belief shown by GET /jobs/{id} equals a replay of the stored history, on
# both replicas (check_answered.py --strict). Sourced by test/e2e/serve_replicas_*.sh after
# serve_lib.sh; needs $dir.
replicas_run() {
  local db=$1
  start_server a "$db" 0 --workers 24
  start_server b "$db" 0 --workers 24
  echo "replicas: ${server_url[a]} ${server_url[b]} on $(redact "$db")"
  "$zeus_load" --url "${server_url[a]},${server_url[b]}" --threads 32 --jobs 4 --lifecycles 4 \
    --log "$dir/answered.jsonl" || fail "zeus_load reported errors (above)"
  python3 "$checker" --strict --log "$dir/answered.jsonl" --db "$db" --server "${server_url[b]}" ||
    fail "the database does not match what the clients were answered (above)"
  # Both replicas answered (the load was spread), and the other replica shows the same beliefs.
  python3 "$checker" --strict --log "$dir/answered.jsonl" --db "$db" --server "${server_url[a]}" \
    > /dev/null || fail "replica a shows other beliefs than replica b"
}

# The URL without its password.
redact() { sed -E 's#^([a-z+]+://[^:/@]*):[^/]*@#\1:***@#' <<< "$1"; }
