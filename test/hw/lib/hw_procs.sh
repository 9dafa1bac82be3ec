# Sourced by the hardware checks that start processes (proxy_torch_real.sh, proxy_govern_real.sh),
# after they set $dir (their scratch folder): pids (the processes to stop with SIGTERM on exit,
# then $dir is removed), fail MESSAGE (prints it and the last lines of $dir/*.err, exits 1) and
# wait_for FILE PATTERN SECONDS.
pids=()
hw_procs_cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap hw_procs_cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
}
wait_for() {  # file pattern seconds
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1 after $3 s: $(cat "$1")"
}
