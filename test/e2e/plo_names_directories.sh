#!/usr/bin/env bash
# zeus plo show DIR and plo replay --log DIR say "is a directory", and plo show
# never advises deleting what it was asked to show.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$dir.err"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
for args in "show $dir" "replay --log $dir"; do
  # shellcheck disable=SC2086
  "$zeus" plo $args > /dev/null 2> "$dir.err"
  rc=$?
  [ "$rc" = 1 ] || fail "'zeus plo $args' exited $rc"
  grep -q "'$dir' is a directory" "$dir.err" || fail "'zeus plo $args': $(cat "$dir.err")"
done
echo 'not json' > "$dir/damaged.json"
"$zeus" plo show "$dir/damaged.json" 2> "$dir.err" && fail "a damaged profile was shown"
grep -q "not a valid power profile" "$dir.err" || fail "damaged profile: $(cat "$dir.err")"
grep -qi "delete" "$dir.err" && fail "plo show advises deleting: $(cat "$dir.err")"
rm -f "$dir.err"
echo "plo_names_directories: ok"
