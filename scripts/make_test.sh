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
# the release build, the wheels, the packages and the release tests, and its unit tests run the
# moment it is built, still beside them: a build leaves a core idle whenever Ninja waits on one
# long step, and the tests wait on servers, sleeps and subprocesses for much of their time
# (measured alone: the release tests keep two cores 55 % busy); the sanitizer tree's compilers and
# tests take only the CPU the others leave. Logs: build/logs/asan-build.log, asan-tests.log.
mkdir -p build/logs
asan_start=$(date +%s)
rm -f build/logs/asan-build.end
# In a session of its own, so that a failing stage stops all of it at once (make, cmake, ninja,
# the compilers, ctest and its tests). A session is also a scheduling group of its own
# (autogroups, Debian's default), shared with the others first, so SCHED_IDLE and nice inside it
# alone would still get it half the machine (measured: 50 % beside the release build): it sets
# its group to nice 19. Exit 10: the build failed; otherwise ctest's status. The unit tests
# labelled unit-pool wait for the fuzzers' pool (the last stage).
asan_beside='make --no-print-directory asan-build > build/logs/asan-build.log 2>&1 || exit 10
date +%s > build/logs/asan-build.end
exec ctest --preset asan -j "$1" -LE unit-pool > build/logs/asan-tests.log 2>&1'
setsid --wait bash -c "echo 19 > /proc/self/autogroup 2> /dev/null; exec chrt --idle 0 nice -n 19 bash -c '$asan_beside' asan $jobs" &
asan_pid=$!
stop_asan_build() {
  kill -TERM -- "-$asan_pid" 2> /dev/null || kill -TERM "$asan_pid" 2> /dev/null || true
  wait "$asan_pid" 2> /dev/null || true
}
# The numbers of the tests a tree's last ctest run failed, comma-separated for `ctest -I 0,0,0,...`
# (numbers, not names: a parameterised test's name is no regular expression).
failed_tests() {
  sed -n 's/^\([0-9]*\):.*/\1/p' "$1/Testing/Temporary/LastTestsFailed.log" 2> /dev/null | paste -sd ,; true
}
# A ctest stopped before its end leaves its database fixtures running (their cleanup tests never
# run): stop those of both trees on the way out (nothing to do when their cleanup ran).
stop_test_databases() {
  local tree
  for tree in build/release build/asan; do
    bash scripts/pg_cluster.sh stop "$tree/pg_cluster" > /dev/null 2>&1 || true
    bash scripts/mariadb_server.sh stop "$tree/mariadb_server" > /dev/null 2>&1 || true
  done
}
trap 'stop_asan_build; stop_test_databases; stages_report' EXIT
finish_asan() {
  local status=0
  wait "$asan_pid" || status=$?
  local now=$(date +%s) built
  built=$(cat build/logs/asan-build.end 2> /dev/null || echo "")
  if [ -n "$built" ]; then
    echo "sanitizer build: $(( built - asan_start )) s, its unit tests: $(( now - built )) s," \
      "all beside the stages above (logs: build/logs/asan-build.log, asan-tests.log)"
  fi
  if [ $status -eq 10 ] || [ -z "$built" ]; then
    tail -40 build/logs/asan-build.log
    return 1
  fi
  tail -3 build/logs/asan-tests.log
  if [ $status -ne 0 ]; then
    # What ctest printed of each failed test (--output-on-failure), then its list of failures.
    awk '/Test +#[0-9]+:/ { p = /\*\*\*(Failed|Exception|Timeout)/ } p' \
      build/logs/asan-tests.log | head -400
    sed -n '/tests passed, .* tests failed/,$p' build/logs/asan-tests.log
    # At idle priority beside the release tests, a test with a wall-clock bound may be starved
    # (a warm run: PowerMonitorTest.InfersThePeriodWhenNoneIsGiven measured a 42 ms period for
    # 50): those that failed run again alone, by number, and that run decides.
    local failed
    failed=$(failed_tests build/asan)
    [ -n "$failed" ] || return $status
    echo "(failed beside the release tests: run again alone, and that run decides)"
    status=0
    ctest --preset asan -I "0,0,0,$failed" || status=$?
  fi
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
  timing_failed=$(failed_tests build/release)
  [ -n "$timing_failed" ] || return 1  # ctest failed without naming a test: nothing to rerun
  echo "(failed beside the sanitizer build: run again alone after it, below)"
}
stage "release tests labelled timing (beside the sanitizer build)" timing_tests
stage "release tests (the sanitizer build and its tests beside)" ctest --test-dir build/release --output-on-failure -j "$jobs" -LE 'hw|timing'
stage "rest of the sanitizer build and its unit tests" finish_asan
if [ -n "$timing_failed" ]; then
  stage "timing tests that failed beside the build, again alone" \
    ctest --test-dir build/release --output-on-failure -j "$jobs" -I "0,0,0,$timing_failed"
fi

# The fuzzers and the unit tests labelled unit-pool in one ctest pool (preset asan-and-fuzz): each
# fuzzer keeps a core for all of its seconds, started first, and those unit tests fill the core
# the eleventh fuzzer leaves (the fuzzers alone would leave one idle for the last one's run).
fuzz_seconds=${FUZZ_SECONDS:-60}
asan_and_fuzz() {
  local status=0
  FUZZ_SECONDS=$fuzz_seconds ctest --preset asan-and-fuzz -j "$jobs" -L '^(unit-pool|fuzz)$' || status=$?
  local log
  for log in build/asan/*_fuzz.log; do
    [ -f "$log" ] && echo "== $(basename "$log" .log): $(tail -1 "$log")"
  done
  return $status
}
stage "fuzz run ($(ls fuzz/*_fuzz.cc | wc -l) targets, ${fuzz_seconds} s each) + unit-pool tests" asan_and_fuzz
