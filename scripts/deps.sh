#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing (apt-get update only
# when something is), with apt's and dpkg's output in a log file instead of the terminal; says
# what it installs, and where the log is when it fails.
#   scripts/deps.sh LOG PACKAGE...
set -euo pipefail
log=$1; shift
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Boost is Debian's default libboost-dev, so python3-scipy can sit beside the project; a
# libboost1.81-dev left by an older checkout conflicts with it and is removed in the same call.
if [ ${#missing[@]} -gt 0 ] && dpkg-query -W -f='${Status}' libboost1.81-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "Removing libboost1.81-dev (older checkouts used it; it conflicts with libboost-dev)"
  missing+=(libboost1.81-dev-)
fi
[ ${#missing[@]} -gt 0 ] || { echo "Debian packages: all $# present"; exit 0; }
mkdir -p "$(dirname "$log")"
echo "Installing ${#missing[@]} Debian packages (log: $log): ${missing[*]}"
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"; } >> "$log" 2>&1; then
  tail -20 "$log" >&2
  echo "deps.sh: apt-get failed; the whole output is in $log" >&2
  exit 1
fi
