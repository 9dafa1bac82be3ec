#!/usr/bin/env bash
# The fuzzing stage of `make test` (`make fuzz`): every libFuzzer target built in BUILD/fuzz/ runs
# SECONDS seconds on its own corpus (BUILD/corpus/<name>/, seeded from fuzz/corpus/<name>/), JOBS
# targets at a time (one per core: each fuzzer is single-threaded, so two on two cores take half
# the wall time of one after the other and each still gets its full SECONDS of CPU).
# Crashes, leaks, timeouts and slow units found go to BUILD/artifacts/<name>/ (never the working
# directory).
# Exit status: non-zero when any target found a crash, a leak or undefined behaviour; its log's
# last lines are printed.
#   scripts/run_fuzzers.sh BUILD SECONDS JOBS [NAME...]     (NAME: only these targets, e.g.
#                                                            uri_fuzz; each is also a ctest test
#                                                            fuzz.NAME in BUILD, run for
#                                                            FUZZ_SECONDS, default 60)
set -euo pipefail
build=${1:?usage: run_fuzzers.sh BUILD SECONDS JOBS [NAME...]}
seconds=${2:-60}
jobs=${3:-2}
names=("${@:4}")
source_dir=$(cd "$(dirname "$0")/.." && pwd)

run_one() {
  local f=$1 name corpus seeds=()
  name=$(basename "$f")
  corpus=$build/corpus/$name
  mkdir -p "$corpus" "$build/artifacts/$name"
  [ -d "$source_dir/fuzz/corpus/$name" ] && seeds=("$source_dir/fuzz/corpus/$name")
  if ! "$f" -max_total_time="$seconds" -max_len=65536 \
      -artifact_prefix="$build/artifacts/$name/" "$corpus" "${seeds[@]}" \
      > "$build/$name.log" 2>&1; then
    echo "== $name: FAILED (log: $build/$name.log)"
    tail -40 "$build/$name.log"
    return 1
  fi
  echo "== $name: $seconds s, $(tail -1 "$build/$name.log")"
}
export -f run_one
export build seconds source_dir

targets=()
if [ ${#names[@]} -gt 0 ]; then
  for name in "${names[@]}"; do
    [ -x "$build/fuzz/$name" ] || { echo "run_fuzzers.sh: no fuzz target $build/fuzz/$name (build the zeus_fuzzers target first)" >&2; exit 1; }
    targets+=("$build/fuzz/$name")
  done
else
  for f in "$build"/fuzz/*_fuzz; do
    [ -x "$f" ] && targets+=("$f")
  done
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "run_fuzzers.sh: no fuzz targets in $build/fuzz (build the zeus_fuzzers target first)" >&2
  exit 1
fi
echo "== ${#targets[@]} fuzz targets, $seconds s each, $jobs at a time"
printf '%s\0' "${targets[@]}" | xargs -0 -n1 -P "$jobs" bash -c 'run_one "$0"'
