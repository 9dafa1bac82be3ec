#!/usr/bin/env bash
# Where the build's time went, from Ninja's own log (BUILD_DIR/.ninja_log: start and end of every
# step it ran, in ms; the latest run of each output counts): the slowest translation units
# (unity batches are named by target and batch), the compile time per target, and the total
# CPU-time of compiling against linking. For comparing a change with the one before it: run
# after a cold build (rm -rf BUILD_DIR, or a fresh clone; CCACHE_DISABLE=1 so ccache hits do not
# hide the compiler's time).
#   scripts/build_times.sh [BUILD_DIR] [N]        (defaults: build/release, 25 slowest steps)
set -euo pipefail
build=${1:-build/release}
top=${2:-25}
[ -f "$build/.ninja_log" ] || { echo "build_times.sh: no $build/.ninja_log (a Ninja build: the presets are)" >&2; exit 1; }
python3 - "$build/.ninja_log" "$top" <<'PY'
import collections, re, sys
log, top = sys.argv[1], int(sys.argv[2])
steps = {}
for line in open(log):
    if line.startswith("#"):
        continue
    fields = line.rstrip("\n").split("\t")
    if len(fields) >= 4:
        steps[fields[3]] = (int(fields[1]) - int(fields[0])) / 1000.0

def target(output):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    return m.group(1) if m else output

compiles = {o: s for o, s in steps.items() if o.endswith(".o")}
links = {o: s for o, s in steps.items() if not o.endswith(".o")}
print(f"{'slowest steps':<72} {'s':>7}")
for output, s in sorted(steps.items(), key=lambda kv: -kv[1])[:top]:
    name = output if not output.endswith(".o") else f"{target(output)}: {output.split('/')[-1]}"
    print(f"  {name[:70]:<70} {s:7.1f}")
per_target = collections.Counter()
for output, s in compiles.items():
    per_target[target(output)] += s
print(f"\n{'compile time per target':<72} {'s':>7}")
for name, s in per_target.most_common(top):
    print(f"  {name[:70]:<70} {s:7.1f}")
print(f"\ncompiling {sum(compiles.values()):.0f} s CPU in {len(compiles)} units; "
      f"linking and other steps {sum(links.values()):.0f} s in {len(links)}")
PY
