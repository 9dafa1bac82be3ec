# fail MESSAGE: the e2e tests' failure: the message, then what the test saw — the last lines of
# every log, error and output file in the test's scratch folder $dir (the daemons' and servers'
# stderr, the clients' answers), so that a failure in a loaded CI run can be read without
# running it again. Sourced by the tests' shared setups (lib/*.sh, test/load/serve_lib.sh).
fail() {
  echo "FAIL: $*" >&2
  [ -n "${dir:-}" ] && [ -d "$dir" ] || exit 1
  local shown=0 f
  while IFS= read -r f; do
    [ -s "$f" ] || continue
    echo "--- the last lines of ${f#"$dir"/}:" >&2
    tail -n 15 "$f" | cut -c1-400 >&2
    shown=$((shown + 1))
    [ "$shown" -lt 8 ] || break
  done < <(find "$dir" -maxdepth 2 -type f \( -name '*.log' -o -name '*.err' -o -name '*.out' \) 2>/dev/null | sort)
  exit 1
}
