#!/usr/bin/env bash
# zeus pfo's output and input paths. --out naming a dangling symbolic link or nothing said
# "cannot move the plans into ...: Success" (an error code never set); --out naming a regular
# file or /dev/null said "exists and is not empty". Each refusal now says
# what is at the path and what to give instead, in one line, with nothing written and no
# temporary left; the word "Success" never appears. A trailing slash (`--out plans/`, as in the
# docs) works.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
here="$(cd "$(dirname "$0")" && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
cd "$dir" || exit 1
python3 "$here/pfo_tiny_profile.py" > tiny.csv
plan=(pfo plan --profile tiny.csv --stages 2 --microbatches 1 --p2p-power 10)

refused() {  # refused <expected text> <zeus args...>
  local want="$1"; shift
  "$zeus" "$@" > out.txt 2> err.txt
  local rc=$?
  [ "$rc" = 1 ] || fail "[$*] exited $rc, expected 1: $(cat err.txt)"
  grep -qF -- "$want" err.txt || fail "[$*] error lacks '$want': $(cat err.txt)"
  grep -q "Success" err.txt && fail "[$*] says Success: $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] || fail "[$*] more than one error line: $(cat err.txt)"
  ls -a | grep -q "\.tmp" && fail "[$*] left a temporary: $(ls -a)"
  return 0
}

ln -s /nonexistent/x od_dangling
refused "--out 'od_dangling' is a symbolic link to '/nonexistent/x', which does not exist" \
  "${plan[@]}" --out od_dangling
[ -L od_dangling ] || fail "the link was replaced"
refused "--out is empty: name a new folder" "${plan[@]}" --out ''
echo data > od_file
refused "--out 'od_file' is a regular file, not a folder" "${plan[@]}" --out od_file
[ "$(cat od_file)" = data ] || fail "od_file was changed"
: > od_empty_file
refused "--out 'od_empty_file' is a regular file, not a folder" "${plan[@]}" --out od_empty_file
[ -f od_empty_file ] || fail "an empty file was replaced"
refused "--out '/dev/null' is a character device, not a folder" "${plan[@]}" --out /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
mkdir od_folder && ln -s od_folder od_link
refused "--out 'od_link' is a symbolic link to 'od_folder'; give the path of a new or empty folder itself" \
  "${plan[@]}" --out od_link
mkdir -p od_full && touch od_full/x
refused "--out 'od_full' exists and is not empty" "${plan[@]}" --out od_full
refused "does not name a folder of its own" "${plan[@]}" --out .
refused "does not name a folder of its own" "${plan[@]}" --out /

# A new folder and an empty one, with or without a trailing slash.
"$zeus" "${plan[@]}" --out plans/ > /dev/null 2> err.txt || fail "--out plans/: $(cat err.txt)"
[ -f plans/frontier.csv ] || fail "--out plans/ wrote no frontier"
"$zeus" "${plan[@]}" --out od_folder/ > /dev/null 2> err.txt || fail "--out od_folder/: $(cat err.txt)"
[ -f od_folder/summary.json ] || fail "--out od_folder/ wrote nothing"

# --plans (pfo choose) names what is wrong with the folder.
refused "--plans 'nothing_here' does not exist" pfo choose --plans nothing_here --fastest
refused "--plans 'od_file' is a regular file, not a folder" pfo choose --plans od_file --fastest
refused "summary.json: No such file or directory" pfo choose --plans od_full --fastest
# choose --out: a new or regular file; never a folder or a device.
refused "--out 'od_full' is a folder, not a regular file" pfo choose --plans plans --fastest --out od_full
refused "--out '/dev/null' is a character device, not a regular file" \
  pfo choose --plans plans --fastest --out /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
refused "--out 'od_dangling' is a symbolic link" pfo choose --plans plans --fastest --out od_dangling
"$zeus" pfo choose --plans plans --fastest --out od_file > /dev/null || fail "choose over a file"
grep -q '"frequencies"' od_file || fail "choose --out od_file wrote no schedule"
echo "pfo_bad_out_paths_are_explained: ok"
