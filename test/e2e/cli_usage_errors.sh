#!/usr/bin/env bash
# A command line zeus cannot parse exits 2 with one line on stderr, never a CLI11
# code (104-114) that `zeus measure` users could take for their command's own status.
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
for args in "measure --bogus -- true" "pfo plan --stages x" "simulate --seeds" "nosuchcommand" \
            "serve --port many"; do
  set +e
  # shellcheck disable=SC2086
  "$zeus" $args > /dev/null 2> "$dir/err.txt"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "'zeus $args' exited $rc, expected 2: $(cat "$dir/err.txt")"
  [ "$(wc -l < "$dir/err.txt")" = 1 ] || fail "'zeus $args' printed more than one line: $(cat "$dir/err.txt")"
  grep -q "^zeus: .*--help" "$dir/err.txt" || fail "'zeus $args' does not point to --help: $(cat "$dir/err.txt")"
done
"$zeus" --help > /dev/null || fail "--help does not exit 0"
"$zeus" pfo plan --help > /dev/null || fail "pfo plan --help does not exit 0"
echo "cli_usage_errors: ok"
