#!/usr/bin/env bash
# Beside cli_usage_errors (exit 2, one line): no usage error of `zeus` (any subcommand, as its
# --help lists them) or `zeusd` echoes the `--` separator. CLI11 counts `--` among the arguments
# it did not expect and printed "The following arguments were not expected: -- --bogus" for
# `zeus measure --bogus -- true`; now the unexpected arguments come alone, in one line, with
# exit status 2. Nothing is run: every command line here is a usage error.
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
zeusd="${ZEUS_BIN:?}/zeusd"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# The subcommands a --help lists (its "Subcommands:" section, up to the first blank line).
subcommands() {
  "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^$/ {exit}
                     on && /^  [a-z][a-z-]* / {print $1}'
}

# usage_error PROGRAM ARGS...: exit 2, one line, and no `--` word in it.
usage_error() {
  set +e
  timeout 20 "$@" > /dev/null 2> "$dir/err.txt"
  local rc=$?
  set -e
  local shown="${*#"${ZEUS_BIN}/"}"
  [ "$rc" = 2 ] || fail "'$shown' exited $rc, expected 2: $(cat "$dir/err.txt")"
  [ "$(wc -l < "$dir/err.txt")" = 1 ] || fail "'$shown' printed more than one line: $(cat "$dir/err.txt")"
  if grep -qE '(^|[[:space:]])--([[:space:]]|$)' "$dir/err.txt"; then
    fail "'$shown' echoes the -- separator: $(cat "$dir/err.txt")"
  fi
}

# The command line that showed the echoed separator, word for word.
usage_error "$zeus" measure --bogus -- true
grep -qx "zeus: The following argument was not expected: --bogus (see zeus measure --help)" \
  "$dir/err.txt" || fail "zeus measure --bogus -- true: $(cat "$dir/err.txt")"
usage_error "$zeus" devices --bogus --what -- x
for word in --bogus --what x; do
  grep -q "arguments were not expected: .*$word" "$dir/err.txt" ||
    fail "the unexpected argument $word is not listed: $(cat "$dir/err.txt")"
done

commands=$(subcommands "$zeus")
[ "$(echo "$commands" | wc -w)" -ge 9 ] || fail "zeus --help lists too few subcommands: $commands"
checked=0
for c in $commands; do
  for path in "$c" $(subcommands "$zeus" "$c" | sed "s/^/$c:/"); do
    # shellcheck disable=SC2086
    set -- ${path//:/ }
    usage_error "$zeus" "$@" --bogus -- x
    usage_error "$zeus" "$@" --bogus --
    usage_error "$zeus" "$@" --bogus -- --more -- y
    checked=$((checked + 1))
  done
done
[ "$checked" -ge 17 ] || fail "only $checked zeus command paths checked"

usage_error "$zeusd" --bogus -- x
grep -qx "zeusd: The following arguments were not expected: --bogus x (see zeusd --help)" \
  "$dir/err.txt" || fail "zeusd --bogus -- x: $(cat "$dir/err.txt")"
usage_error "$zeusd" --bogus --
usage_error "$zeusd" -- --bogus -- y
"$zeusd" --help > /dev/null || fail "zeusd --help does not exit 0"
echo "cli_usage_errors_never_echo_separator: ok ($checked zeus command paths and zeusd)"
