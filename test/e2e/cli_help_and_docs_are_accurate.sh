#!/usr/bin/env bash
# Help and docs cite no REFERENCE.md or DESIGN.md (not in the
# repository; the facts are in docs/), zeus devices shows persistence mode, and the README's
# simulate time claim names the case it holds for.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
src="${ZEUS_SOURCE_DIR:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
"$zeus" bso register --help > "$dir/help.txt" || fail "bso register --help"
grep -q "REFERENCE" "$dir/help.txt" && fail "bso register --help cites REFERENCE.md"
grep -q "docs/server.md" "$dir/help.txt" || fail "bso register --help does not point to docs/server.md"
grep -n "REFERENCE\.md\|DESIGN\.md" "$src/docs/server.md" "$src/docs/architecture.md" "$src/README.md" \
  && fail "docs cite a file that is not in the repository"
grep -q '^| `mab_seed` ' "$src/docs/server.md" || fail "docs/server.md lacks the job spec fields"

cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "persistence": true}, {}]}
JSON
ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1" \
  ZEUS_POWERCAP_ROOT="$dir/none" "$zeus" devices > "$dir/devices.txt" || fail "zeus devices"
[ "$(grep -c "^  persistence mode " "$dir/devices.txt")" = 2 ] || fail "no persistence mode line: $(cat "$dir/devices.txt")"
grep -q "^  persistence mode on" "$dir/devices.txt" || fail "persistence mode: $(cat "$dir/devices.txt")"
grep -q "~0.1 s" "$src/README.md" && fail "README still claims ~0.1 s for simulate"
echo "cli_help_and_docs_are_accurate: ok"
