#!/usr/bin/env bash
# make test: every package, build and test stage, each timed, with the table of stages and times
# at the end (scripts/stages.sh), so a stage that grows is seen by whoever runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
jobs=${JOBS:-$(nproc)}
m() { make --no-print-directory "$@"; }

stage "Debian packages and npm (all)" m deps

# The sanitizer tree builds from here on at the lowest CPU priority (SCHED_IDLE, nice 19), beside
# the release build, the wheels, the packages and the release tests: a build leaves a core idle
# whenever Ninja waits on one long step, and the tests wait on servers, sleeps and subprocesses
# for much of their time (measured: the release tests use about 45 % of two cores); the
# sanitizer's compilers take only the CPU the others leave. The tests labelled "timing"
# (wall-clock bounds) run after it, on an idle machine. Its log: build/logs/asan-build.log.
mkdir -p build/logs
asan_start=$(date +%s)
# In a session of its own, so that a failing stage stops the whole build (make, cmake, ninja and
# the compilers) at once. A session is also a scheduling group of its own (autogroups, Debian's
# default), shared with the others first, so SCHED_IDLE and nice inside it alone would still get
# it half the machine (measured: 50 % beside the release build): it sets its group to nice 19.
setsid --wait bash -c 'echo 19 > /proc/self/autogroup 2> /dev/null; exec chrt --idle 0 nice -n 19 make --no-print-directory asan-build' > build/logs/asan-build.log 2>&1 &
asan_pid=$!
stop_asan_build() {
  kill -TERM -- "-$asan_pid" 2> /dev/null || kill -TERM "$asan_pid" 2> /dev/null || true
  wait "$asan_pid" 2> /dev/null || true
}
trap 'stop_asan_build; stages_report' EXIT
finish_asan_build() {
  local status=0
  wait "$asan_pid" || status=$?
  echo "sanitizer build: $(( $(date +%s) - asan_start )) s in all, beside the stages above" \
    "(log: build/logs/asan-build.log)"
  if [ $status -ne 0 ]; then tail -40 build/logs/asan-build.log; fi
  return $status
}

stage "release build (programs, tests, benchmarks)" m build
stage "wheels (every CPython 3.10-3.13 found)" m wheel
stage "GPU check kit (build/hw-kit)" ./packaging/hw-kit/assemble.sh build/release dist build/hw-kit
stage "Debian package (dist/zeus_*.deb)" m deb
stage "release tests (ctest; the sanitizer build beside them)" ctest --test-dir build/release --output-on-failure -j "$jobs" -LE 'hw|timing'
stage "sanitizer build (what was left after the release tests)" finish_asan_build
stage "release tests labelled timing (alone)" ctest --test-dir build/release --output-on-failure -j "$jobs" -L timing -LE hw
stage "ASan+UBSan tests" ctest --preset asan -j "$jobs"
stage "fuzz run (${FUZZ_SECONDS:-60} s per target)" ./scripts/run_fuzzers.sh build/asan "${FUZZ_SECONDS:-60}" "$jobs"
