#!/usr/bin/env bash
# An error never echoes unbounded user input. A 100 KB value comes back as its
# first 80 bytes and its size, whether the CLI's own parser or the library wrote the message.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
export ZEUS_NVML_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
big=$(head -c 100000 /dev/zero | tr '\0' 7)
bigname=$(head -c 100000 /dev/zero | tr '\0' w)
for args in "measure --gpus $big -- true" "power --gpus $big" "simulate --workload $bigname" \
            "simulate --seeds $big" "power --duration $bigname" "plo show $dir/$bigname" \
            "serve --port $bigname"; do
  # shellcheck disable=SC2086
  timeout 10 "$zeus" $args > /dev/null 2> "$dir/err.txt"
  rc=$?
  [ "$rc" != 0 ] || fail "'zeus ${args:0:40}…' succeeded"
  size=$(wc -c < "$dir/err.txt")
  [ "$size" -lt 2200 ] || fail "'zeus ${args:0:40}…' echoed $size bytes: $(head -c 300 "$dir/err.txt")"
done
"$zeus" simulate --workload "$bigname" 2> "$dir/err.txt"
grep -q "(100000 bytes)" "$dir/err.txt" || fail "the size of the cut value is not named: $(head -c 300 "$dir/err.txt")"
"$zeus" measure --gpus "$big" -- true 2> "$dir/err.txt"
grep -q "^zeus: --gpus '7\{80\}…(100000 bytes)' is not a list of GPU indices" "$dir/err.txt" \
  || fail "--gpus: $(head -c 300 "$dir/err.txt")"
echo "cli_echo_is_bounded: ok"
