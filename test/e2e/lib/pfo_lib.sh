# Helpers for the e2e tests of `zeus pfo serve` (sourced by test/e2e/pfo_*.sh). Needs ZEUS_BIN.
# Sets $zeus, $dir (a fresh scratch folder, removed at exit), $server_pid and $url (the running
# server, "" when none; stopped at exit), and $pids (other background processes, killed at exit).

zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
server_pid=""
url=""
pids=()
pfo_lib_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap pfo_lib_cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# start_pfo_server [VAR=value ...] [-- zeus pfo serve flags ...]: starts the server on a free port
# with that environment (upstream's ZEUS_PFO_* settings) and flags, logging to $dir/server.log;
# sets $server_pid and $url once it prints where it listens (its first line).
start_pfo_server() {
  local vars=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  # Emptied here, not by the background job's redirection: that one happens later, in the child,
  # and the loop below would read a previous server's "listening on" line.
  : > "$dir/server.log"
  env "${vars[@]}" "$zeus" pfo serve --port 0 "$@" >> "$dir/server.log" 2>&1 &
  server_pid=$!
  url=""
  for _ in $(seq 100); do
    url=$(grep -o 'listening on http://[0-9.:]*' "$dir/server.log" | sed 's/listening on //' || true)
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || fail "the server did not start: $(cat "$dir/server.log")"
  local first
  first=$(sed -n 1p "$dir/server.log")
  case "$first" in
    "zeus pfo serve: listening on http://"*) ;;
    *) fail "first line: '$first' (log: $(od -c "$dir/server.log" | head -5))" ;;
  esac
}

# stop_pfo_server: SIGINT; the server must exit 0 and say it stopped.
stop_pfo_server() {
  kill -INT "$server_pid"
  wait "$server_pid" || fail "the server did not exit 0 after SIGINT"
  server_pid=""
  grep -q "zeus pfo serve: stopped" "$dir/server.log" || fail "no stop line: $(cat "$dir/server.log")"
}
