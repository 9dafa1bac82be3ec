#!/usr/bin/env bash
# What a Python user loads with `import zeus_cpp`: the extension of every wheel `make wheel` left
# in dist/ needs none of the daemon's libraries (libjwt, RE2, toml++: only the zeusd program links
# them) and no database server's client library (libpq, libpqxx, MariaDB's connector: only the
# stores of `zeus serve` link them); SQLite it may need (BatchSizeService.local opens a local
# store). auditwheel renames the libraries it bundles (libjwt-7c1e16bc.so.0): the names are
# matched by their stem.
set -euo pipefail
dist=${ZEUS_DIST_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
shopt -s nullglob
wheels=("$dist"/zeus_cpp-*.whl)
[ ${#wheels[@]} -gt 0 ] || fail "no wheel in $dist: run make wheel first"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
forbidden='^(libjwt|libre2|libtomlplusplus|libpq|libpqxx|libmariadb|libmysqlclient)[-.]'
for wheel in "${wheels[@]}"; do
  rm -rf "$dir/x"
  /usr/bin/python3 -m zipfile -e "$wheel" "$dir/x"
  extensions=("$dir"/x/zeus_cpp/_zeus_cpp*.so)
  [ ${#extensions[@]} -eq 1 ] || fail "$(basename "$wheel"): expected one zeus_cpp/_zeus_cpp*.so, found ${#extensions[@]}"
  needed=$(readelf -d "${extensions[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || fail "$(basename "$wheel"): readelf listed no NEEDED entry (is it a shared object?)"
  bad=$(grep -E "$forbidden" <<< "$needed" || true)
  [ -z "$bad" ] || fail "$(basename "$wheel"): the extension needs $(tr '\n' ' ' <<< "$bad")(only zeusd or zeus serve may)"
  echo "$(basename "$wheel"): $(tr '\n' ' ' <<< "$needed")"
done
echo "ok: ${#wheels[@]} wheels, no daemon or database-server library in their extensions"
