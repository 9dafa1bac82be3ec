#!/usr/bin/env bash
# The main job of `make run`: show the devices found, then measure a short command on them.
set -euo pipefail
build=${1:-build/release}
zeus="$build/bin/zeus"
echo "== zeus devices"
"$zeus" devices
echo
echo "== zeus measure -- sleep 1"
"$zeus" measure -- sleep 1
