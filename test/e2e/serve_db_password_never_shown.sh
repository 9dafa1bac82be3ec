#!/usr/bin/env bash
# zeus serve never shows a database password holding '#', '/', '?' and '@' (as SQLAlchemy accepts
# them): refused at start (nothing listens), on --db-file and on --db alike, the message holds no
# part of it; then on a private MariaDB whose user has that password, given with --db-file (off
# the command line, which every local user can read with ps), the server connects, and once the
# database is stopped the start line, the log and the 503 answers of /healthz and a route hold
# no part of it, the answers no URL at all.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$dir"/*.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }; done; exit 1; }
secret='S3cr#t/Pw?x@y'
# Port 1: nothing listens, so the store is down from the start (as after a database restart).
url="mysql://zeus:$secret@127.0.0.1:1/zeus?connect_timeout=1"
printf '%s\n' "$url" > "$dir/db-url"
chmod 600 "$dir/db-url"

for how in file flag; do
  if [ "$how" = file ]; then args=(--db-file "$dir/db-url"); else args=(--db "$url"); fi
  "$zeus" serve "${args[@]}" --port 0 > "$dir/$how.log" 2>&1 &
  pid=$!
  base=""
  for _ in $(seq 100); do
    base=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/$how.log")
    [ -n "$base" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$base" ]; then
    grep -q "zeus:\*\*\*@127.0.0.1:1/zeus" "$dir/$how.log" || fail "$how: the start line does not show the redacted URL"
    for path in /healthz "/jobs/batch_size?job_id=x"; do
      for _ in $(seq 30); do
        body=$(curl -s -m 10 "$base$path")
        [[ $body == *unavailable* ]] && break
        sleep 0.2
      done
      [[ $body == *unavailable* ]] || fail "$how: $path did not say the store is unavailable: $body"
      [[ $body != *"://"* ]] || fail "$how: $path quotes a URL: $body"
      echo "$body" > "$dir/$how-answer.log"
    done
    if [ "$how" = file ]; then
      ! ps -o args= -p "$pid" | grep -qF "S3cr" || fail "the password is on the command line"
    fi
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
  else
    wait "$pid" 2>/dev/null || true  # refused at start: its message is checked below
  fi
  pid=""
  for part in "S3cr" 't/Pw' 'Pw?x' 'x@y'; do
    ! grep -qF -- "$part" "$dir/$how.log" "$dir/$how-answer.log" 2>/dev/null ||
      fail "$how: '$part' of the password was shown: $(grep -hF -- "$part" "$dir/$how.log" "$dir/$how-answer.log" | head -2)"
  done
  echo "$how: the password was never shown ($(head -c 120 "$dir/$how.log" | head -1))"
done
# A real MariaDB whose user has that password.
maria="$dir/maria"
bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" start "$maria" > "$dir/maria.out" 2>&1 || fail "MariaDB: $(tail -3 "$dir/maria.out")"
trap 'bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" stop "$maria" > /dev/null 2>&1 || true; cleanup' EXIT
port=$(sed -nE 's|.*@127.0.0.1:([0-9]+)/zeus$|\1|p' "$dir/maria.out" | tail -1)
bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" sql "$maria" \
  "CREATE USER 'pw'@'127.0.0.1' IDENTIFIED BY '$secret'; GRANT ALL ON zeus.* TO 'pw'@'127.0.0.1';" > /dev/null
printf 'mysql://pw:%s@127.0.0.1:%s/zeus\n' "$secret" "$port" > "$dir/db-url"
"$zeus" serve --db-file "$dir/db-url" --port 0 > "$dir/live.log" 2>&1 &
pid=$!
base=""
for _ in $(seq 100); do
  base=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/live.log")
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || fail "zeus serve did not start on MariaDB with the password from --db-file"
[ "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$base/healthz")" = 200 ] || fail "/healthz before the stop"
grep -q "pw:\*\*\*@127.0.0.1:$port/zeus" "$dir/live.log" || fail "the start line: $(head -1 "$dir/live.log")"
! ps -o args= -p "$pid" | grep -qF "S3cr" || fail "the password is on the command line"
bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" stop "$maria" > /dev/null 2>&1
for path in /healthz "/jobs/batch_size?job_id=x"; do
  for _ in $(seq 50); do
    body=$(curl -s -m 10 "$base$path")
    [[ $body == *unavailable* ]] && break
    sleep 0.2
  done
  [[ $body == *unavailable* ]] || fail "$path with MariaDB stopped: $body"
  [[ $body != *"://"* ]] || fail "$path quotes a URL: $body"
  echo "$body" >> "$dir/live-answers.log"
done
for part in "S3cr" 't/Pw' 'Pw?x' 'x@y'; do
  ! grep -qF -- "$part" "$dir/live.log" "$dir/live-answers.log" ||
    fail "'$part' of the password was shown: $(grep -hF -- "$part" "$dir/live.log" "$dir/live-answers.log" | head -2)"
done
echo "on MariaDB, with the database stopped: $(head -1 "$dir/live-answers.log" | cut -c1-160)"
echo "zeus serve never shows a database password: ok"
