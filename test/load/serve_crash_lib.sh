# crash_run NAME DB_URL: kill -9 `zeus serve` twice while 8 client threads (zeus_load) run job
# lifecycles on DB_URL, restart it on the same port each time (clients resend what got no
# answer), then check that every answered report is in the database (check_answered.py). Sourced
# by test/e2e/serve_crash*.sh after serve_lib.sh; needs $dir. Prints what it killed and checked.
crash_run() {
  local name=$1 db=$2 port log="$dir/answered_$1.jsonl"
  port=$(free_port)
  start_server "$name" "$db" "$port"
  "$zeus_load" --url "${server_url[$name]}" --threads 8 --jobs 2 --duration 4 --retry-s 30 \
    --job-prefix "crash_$name" --log "$log" > "$dir/load_$name.out" &
  local load_pid=$! kill_round reports
  for kill_round in 1 2; do
    # Kill once clients have had a few hundred more answers.
    for _ in $(seq 1 400); do
      reports=$(grep -c '"report"' "$log" 2> /dev/null || true)
      [ "${reports:-0}" -ge $((kill_round * 150)) ] && break
      sleep 0.02
    done
    kill -9 "${server_pid[$name]}"
    wait "${server_pid[$name]}" 2> /dev/null || true
    echo "$name: killed the server after ${reports:-0} answered reports"
    local tries=0
    until start_server "$name" "$db" "$port"; do  # the port may linger a moment
      tries=$((tries + 1))
      [ $tries -lt 20 ] || fail "$name: zeus serve did not restart on port $port"
      sleep 0.25
    done
  done
  wait "$load_pid" || { cat "$dir/load_$name.out"; fail "$name: zeus_load reported errors"; }
  cat "$dir/load_$name.out"
  python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["transport_errors"] == 0 else 1)' "$dir/load_$name.out" \
    && fail "$name: no request went unanswered: the kills missed the load"
  python3 "$checker" --log "$log" --db "$db" --server "${server_url[$name]}" ||
    fail "$name: an answered report is missing after the crash (above)"
}
