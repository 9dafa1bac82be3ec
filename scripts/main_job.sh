#!/usr/bin/env bash
# The main job of `make run`: list the devices found (a short first step), then reproduce the
# paper's headline evaluation with the trace-driven simulator on the bundled traces (data/):
# `zeus simulate` with its defaults (V100, eta 0.5, beta 2, 10 seeds, the six workloads), writing
# a Markdown/HTML report with CSV data and SVG figures, and end with the headline table and the
# report's path.
set -euo pipefail
build=${1:-build/release}
zeus="$build/bin/zeus"
report="$build/report"
echo "== zeus devices"
"$zeus" devices
echo
echo "== zeus simulate --report $report"
"$zeus" simulate --report "$report" > "$build/headline.txt"
sed '/^report: /d' "$build/headline.txt"
echo
echo "report: $(cd "$report" && pwd)/index.html (Markdown: index.md; figures: *.svg; data: *.csv)"
