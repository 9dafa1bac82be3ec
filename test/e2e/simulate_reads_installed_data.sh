#!/usr/bin/env bash
# A zeus installed with `cmake --install` (binaries only in <prefix>/bin, data in
# <prefix>/share/zeus/data) reads the installed data, not the build tree's, with no variable set.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "${ZEUS_BUILD_DIR:?}" --prefix "$tmp/prefix" > "$tmp/install.log"
zeus="$tmp/prefix/bin/zeus"
[ -x "$zeus" ] && [ -x "$tmp/prefix/bin/zeusd" ] || { echo "FAIL: zeus/zeusd not installed"; exit 1; }
[ -f "$tmp/prefix/share/zeus/data/summary_train.csv" ] || { echo "FAIL: data not installed"; exit 1; }
unset ZEUS_DATA_DIR
cd "$tmp"
"$zeus" simulate --workload cifar100 --seeds 1 --json > "$tmp/out.json" \
  || { echo "FAIL: installed zeus could not simulate"; exit 1; }
grep -q '"cifar100"' "$tmp/out.json" || { echo "FAIL: no cifar100 result"; cat "$tmp/out.json"; exit 1; }
# It reads the installed copy: without it, the error names the installed folder.
rm "$tmp/prefix/share/zeus/data/summary_train.csv"
if "$zeus" simulate --workload cifar100 --seeds 1 > /dev/null 2> "$tmp/err"; then
  echo "FAIL: simulate succeeded without the installed summary_train.csv"; exit 1
fi
grep -qF "$tmp/prefix/share/zeus/data" "$tmp/err" || { echo "FAIL: error does not name the installed data:"; cat "$tmp/err"; exit 1; }
echo "simulate_reads_installed_data: ok, installed zeus reads $tmp/prefix/share/zeus/data"
