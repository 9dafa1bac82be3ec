#!/usr/bin/env bash
# zeus measure keeps the command's exit code when its reader has
# gone (no death by SIGPIPE; the failed write is reported) and gives the command the default
# SIGPIPE back; a directory as the command exits 126 "is a directory" as a shell does (127 only
# for a command not found); plo replay refuses rows whose energy and time give no finite cost,
# naming the line.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 150000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES

# 1. The reader closes stdin at once: zeus's JSON write fails; zeus says so and exits 4 (the
# command's code), not 141.
"$zeus" measure --json -- sh -c 'sleep 0.2; exit 4' 2> "$dir/err.txt" | (exec 0<&-)
rc=${PIPESTATUS[0]}
[ "$rc" = 4 ] || fail "exit $rc with a closed stdout, expected the command's 4 ($(cat "$dir/err.txt"))"
grep -q "writing to stdout failed" "$dir/err.txt" || fail "the failed write is not reported: $(cat "$dir/err.txt")"
# A command that succeeded: the lost output is zeus's failure, 74 (EX_IOERR).
"$zeus" measure --json -- sh -c 'sleep 0.2' 2> /dev/null | (exec 0<&-)
rc=${PIPESTATUS[0]}
[ "$rc" = 74 ] || fail "exit $rc with a closed stdout after a successful command, expected 74"
# The command gets SIGPIPE as zeus found it (default here), not zeus's own "ignore".
without=$(sh -c 'grep ^SigIgn /proc/self/status' | awk '{print $2}')
with=$("$zeus" measure -- sh -c 'grep ^SigIgn /proc/self/status' 2> /dev/null | awk '{print $2}')
[ $(( 0x$with & 0x1000 )) = $(( 0x$without & 0x1000 )) ] \
  || fail "SIGPIPE (bit 0x1000) of the command: SigIgn $with under zeus, $without without"

# 2. Commands that cannot run: 126 for a directory or a file without execute permission, 127
# for a command that does not exist.
"$zeus" measure -- /tmp 2> "$dir/err.txt"; rc=$?
[ "$rc" = 126 ] || fail "measure -- /tmp exited $rc, expected 126"
grep -q "is a directory" "$dir/err.txt" || fail "measure -- /tmp: $(cat "$dir/err.txt")"
printf '#!/bin/sh\n' > "$dir/noexec.sh"; chmod 644 "$dir/noexec.sh"
"$zeus" measure -- "$dir/noexec.sh" 2> "$dir/err.txt"; rc=$?
[ "$rc" = 126 ] || fail "a file without x permission exited $rc, expected 126"
grep -qi "permission denied" "$dir/err.txt" || fail "no x permission: $(cat "$dir/err.txt")"
"$zeus" measure -- "$dir/absent-command" 2> "$dir/err.txt"; rc=$?
[ "$rc" = 127 ] || fail "a missing command exited $rc, expected 127"

# 3. plo replay: finite fields that give no finite power or cost are refused with the line.
printf 'start_time,window_name,elapsed_time,gpu0_energy\n1,__PowerLimitOptimizer_300,1,5\n2,__PowerLimitOptimizer_200,1e-308,1e308\n' \
  > "$dir/overflow.csv"
"$zeus" plo replay --log "$dir/overflow.csv" > "$dir/out.txt" 2> "$dir/err.txt" && fail "an infinite power was accepted"
grep -q "line 3" "$dir/err.txt" || fail "the error does not name line 3: $(cat "$dir/err.txt")"
grep -q "no finite power" "$dir/err.txt" || fail "the error does not say why: $(cat "$dir/err.txt")"
[ -s "$dir/out.txt" ] && fail "a table was printed"
# Each row finite, but the cost overflows (1e308 J at eta 0.5 next to a huge time at 300 W).
printf 'start_time,window_name,elapsed_time,gpu0_energy\n1,__PowerLimitOptimizer_300,1e306,1e308\n2,__PowerLimitOptimizer_200,1,5\n' \
  > "$dir/cost.csv"
"$zeus" plo replay --log "$dir/cost.csv" > "$dir/out.txt" 2> "$dir/err.txt" && fail "an infinite cost was accepted"
grep -q "is not a finite number" "$dir/err.txt" || fail "infinite cost: $(cat "$dir/err.txt")"
grep -q "setting 300" "$dir/err.txt" || fail "infinite cost does not name the limit: $(cat "$dir/err.txt")"
echo "measure_exit_codes_like_a_shell: ok"
