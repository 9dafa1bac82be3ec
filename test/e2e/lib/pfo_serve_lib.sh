# Sourced by the `zeus pfo serve` e2e tests; needs $zeus, $dir and fail().
# start_server [VAR=value ...] [-- serve flags ...]: starts `zeus pfo serve --port 0` in the
# background with that environment and flags; sets server_pid and url, and checks that the first
# line printed is the "listening on" line.
start_server() {
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  env "${envs[@]}" "$zeus" pfo serve --port 0 "$@" > "$dir/server.log" 2>&1 &
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
