#!/usr/bin/env bash
# The main job of `make run`: list the devices found (a short first step), then reproduce the
# paper's headline evaluation with the trace-driven simulator on the bundled traces (data/):
# `zeus simulate` with its defaults (V100, eta 0.5, beta 2, 10 seeds, the six workloads), writing
# a Markdown/HTML report with CSV data and SVG figures, then the Perseus paper's emulation on
# A100 SXM (Table 6 and Fig. 7 for 12 and 96 microbatches, with its report), and end with the
# headline table and the reports' paths.
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
echo "== zeus simulate perseus --gpus a100_sxm --microbatches 12 96 --report $report-perseus"
"$zeus" simulate perseus --gpus a100_sxm --microbatches 12 96 --slowdowns 1.05 1.1 1.2 1.5 \
  --report "$report-perseus" | sed '/^report: /d'
echo
echo "report: $(cd "$report" && pwd)/index.html (Markdown: index.md; figures: *.svg; data: *.csv)"
echo "Perseus report: $(cd "$report-perseus" && pwd)/index.html"
