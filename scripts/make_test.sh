#!/usr/bin/env bash
# make test: every package, build and test stage, each timed, with the table of stages and times
# at the end (scripts/stages.sh), so a stage that grows is seen by whoever runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
jobs=${JOBS:-$(nproc)}
m() { make --no-print-directory "$@"; }

stage "Debian packages and npm (all)" m deps
stage "release build (programs, tests, benchmarks)" m build
stage "wheels (every CPython 3.10-3.13 found)" m wheel
stage "GPU check kit (build/hw-kit)" ./packaging/hw-kit/assemble.sh build/release dist build/hw-kit
stage "Debian package (dist/zeus_*.deb)" m deb
stage "release tests (ctest)" ctest --preset release -j "$jobs"
stage "sanitizer build (clang ASan+UBSan: unit tests, fuzz targets)" m asan-build
stage "ASan+UBSan tests" ctest --preset asan -j "$jobs"
stage "fuzz run (${FUZZ_SECONDS:-60} s per target)" ./scripts/run_fuzzers.sh build/asan "${FUZZ_SECONDS:-60}" "$jobs"
