#!/usr/bin/env bash
# A --token-file that is a directory is named as one ("is a directory"), by zeus
# serve and by zeus bso, instead of "is empty".
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
mkdir "$dir/tokens"
for args in "serve --db memory:// --port 0 --token-file $dir/tokens" \
            "bso next --job-id j --server http://127.0.0.1:9 --token-file $dir/tokens"; do
  # shellcheck disable=SC2086
  timeout 10 "$zeus" $args > /dev/null 2> "$dir/err.txt"
  rc=$?
  [ "$rc" = 1 ] || fail "'zeus $args' exited $rc, expected 1: $(cat "$dir/err.txt")"
  grep -q "the token file '$dir/tokens' is a directory" "$dir/err.txt" \
    || fail "'zeus $args': $(cat "$dir/err.txt")"
  grep -q "empty" "$dir/err.txt" && fail "'zeus $args' still says empty"
done
echo "serve_token_file_directory_is_named: ok"
