#!/usr/bin/env bash
# make run: the lean path to the main job. Installs only the Debian packages that building zeus
# and running the main job need (RUN_PACKAGES in the Makefile: no browser, database server,
# Prometheus, clang, torch or Node, which only `make test` installs), builds only the zeus
# program, runs the main job (scripts/main_job.sh), and prints each phase with its time.
#   scripts/make_run.sh BUILD_DIR PACKAGE...
# Sourced (test/e2e/make_run_progress_reads_no_missing_log.sh), it only defines its functions.
set -euo pipefail
logs=${ZEUS_RUN_LOGS:-build/logs}

# The build's progress so far ("[12/340]"), from its log; nothing, and no complaint, while the
# log is not there yet or holds no step.
build_progress() {
  grep -so '^\[[0-9]*/[0-9]*\]' "$1" | tail -1 || true
}

compile() {
  [ -f "$build/CMakeCache.txt" ] || cmake --preset release > "$logs/configure.log" 2>&1 \
    || { tail -30 "$logs/configure.log"; return 1; }
  echo "compiling zeus and the fake NVML (log: $logs/build.log)"
  # The build's own lines go to the log; the terminal gets its progress, one line redrawn. The log
  # is created here, before the build starts: the background job opens it only once it runs, and
  # the loop below may read it before that ("grep: build/logs/build.log: No such file or
  # directory" was once in make run's output).
  : > "$logs/build.log"
  cmake --build "$build" --target zeus_cli fake_nvml -j "${JOBS:-$(nproc)}" > "$logs/build.log" 2>&1 &
  local pid=$! last=""
  while kill -0 $pid 2> /dev/null; do
    local now=$(build_progress "$logs/build.log")
    if [ -t 1 ] && [ "$now" != "$last" ]; then printf '\r  %s' "$now"; last=$now; fi
    sleep 2
  done
  wait $pid || { [ -t 1 ] && echo; grep -B2 -A12 -m3 'error' "$logs/build.log" || tail -30 "$logs/build.log"; \
                 echo "build failed; the whole output is in $logs/build.log" >&2; return 1; }
  [ -t 1 ] && printf '\r  done        \n' || true
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

cd "$(dirname "$0")/.."
build=$1; shift
source scripts/stages.sh
mkdir -p "$logs"

stage "Debian packages (build and main job only)" scripts/deps.sh "$logs/apt.log" "$@"
stage "build (zeus only)" compile
stage "main job" scripts/main_job.sh "$build"
cat <<TEXT

zeus is $(pwd)/$build/bin/zeus; put it on PATH for this shell with
  export PATH="$(pwd)/$build/bin:\$PATH"
Without a GPU, the fake NVML plays one (an H100 at 350 W) for every command:
  export ZEUS_NVML_PATH="$(pwd)/$build/fakes/libnvidia-ml.so.1"
or install zeus (with zeusd and the data zeus simulate reads) with
  cmake --build $build --target zeusd && cmake --install $build --prefix ~/.local
\`make test\` installs the test tools and builds and runs everything else.
TEXT
