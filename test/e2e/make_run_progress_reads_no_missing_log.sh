#!/usr/bin/env bash
# make run's build progress (scripts/make_run.sh): its output had a stray
# "grep: build/logs/build.log: No such file or directory", the progress loop reading the log
# before the backgrounded build had opened it. The progress of a log that is not there yet is
# nothing, silently; and compile() (with a stand-in cmake on PATH that prints two build steps)
# creates the log before it starts the build, prints no complaint, and leaves the build's lines in
# the log.
set -euo pipefail
root="${ZEUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
export ZEUS_RUN_LOGS="$dir/logs"
mkdir -p "$ZEUS_RUN_LOGS"
source "$root/scripts/make_run.sh"

out=$(build_progress "$dir/logs/not-yet.log" 2> "$dir/progress.err")
[ -z "$out" ] || fail "the progress of a missing log: '$out'"
[ ! -s "$dir/progress.err" ] || fail "reading a log not there yet complained: $(cat "$dir/progress.err")"
printf '[1/3] a\n[2/3] b\n' > "$dir/logs/some.log"
[ "$(build_progress "$dir/logs/some.log")" = "[2/3]" ] || fail "the progress of a log with steps"

mkdir -p "$dir/bin" "$dir/build"
touch "$dir/build/CMakeCache.txt"
cat > "$dir/bin/cmake" <<'SH'
#!/bin/sh
echo "[1/2] Building CXX object zeus.cc.o"
sleep 0.3
echo "[2/2] Linking CXX executable zeus"
SH
chmod +x "$dir/bin/cmake"
build="$dir/build"
for _ in 1 2 3; do
  rm -f "$dir/logs/build.log"
  PATH="$dir/bin:$PATH" compile > "$dir/compile.out" 2> "$dir/compile.err" \
    || fail "compile with the stand-in cmake failed: $(cat "$dir/compile.out" "$dir/compile.err")"
  [ ! -s "$dir/compile.err" ] || fail "compile printed: $(cat "$dir/compile.err")"
  grep -q '^\[2/2\] Linking' "$dir/logs/build.log" || fail "the build's lines are not in its log"
done
echo "make run's progress: ok"
