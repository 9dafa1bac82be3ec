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
# for much of their time (measured alone: the release tests keep two cores 55 % busy); the
# sanitizer's compilers take only the CPU the others leave. Its log: build/logs/asan-build.log.
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

# The tests labelled "timing" (wall-clock bounds: real sleeps, threads a few ms apart) use little
# CPU; they run beside the sanitizer build, which takes only the CPU they leave. They run before
# the other release tests, while the build still has much to compile: run after them, the build
# ended a minute before they did and left a core idle (66 % of two cores over the stage). Any that
# fails there runs again alone once the build is done, and that run decides.
timing_failed=""
timing_tests() {
  ctest --test-dir build/release --output-on-failure -j "$jobs" -L timing -LE hw && return 0
  # The names, kept now: the release tests' ctest below writes its own list of failures.
  timing_failed=$(sed 's/^[0-9]*://; s/[.]/[.]/g' build/release/Testing/Temporary/LastTestsFailed.log | paste -sd '|')
  [ -n "$timing_failed" ] || return 1  # ctest failed without naming a test: nothing to rerun
  echo "(failed beside the sanitizer build: run again alone after it, below)"
}
stage "release tests labelled timing (beside the sanitizer build)" timing_tests
stage "release tests (ctest; the sanitizer build beside them)" ctest --test-dir build/release --output-on-failure -j "$jobs" -LE 'hw|timing'
stage "sanitizer build (what was left after the release tests)" finish_asan_build
if [ -n "$timing_failed" ]; then
  stage "timing tests that failed beside the build, again alone" \
    ctest --test-dir build/release --output-on-failure -j "$jobs" -R "^($timing_failed)\$"
fi

# The ASan+UBSan unit tests and the fuzzers in one ctest pool (preset asan-and-fuzz): each fuzzer
# keeps a core for all of its seconds, started first, and the unit tests fill the other core and
# the gaps (the fuzzers alone would leave one idle for the last odd target's run).
fuzz_seconds=${FUZZ_SECONDS:-60}
asan_and_fuzz() {
  local status=0
  FUZZ_SECONDS=$fuzz_seconds ctest --preset asan-and-fuzz -j "$jobs" || status=$?
  local log
  for log in build/asan/*_fuzz.log; do
    [ -f "$log" ] && echo "== $(basename "$log" .log): $(tail -1 "$log")"
  done
  return $status
}
stage "ASan+UBSan tests and the fuzz run ($(ls fuzz/*_fuzz.cc | wc -l) targets, ${fuzz_seconds} s each)" asan_and_fuzz
