#!/usr/bin/env bash
# The docs say what the code does:
# - framing: no comment promises "501 an unknown transfer coding" that never happens, and the docs
#   state the framing rule (Transfer-Encoding exactly chunked, else 400/501 and close);
# - zeusd's socket: operators.md says every ancestor of zeusd's socket is checked, and what a low
#   `nofile` limit does to the connection cap.
set -uo pipefail
src="${ZEUS_SOURCE_DIR:?}"
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
grep -n "501 an unknown transfer coding" "$src/src/http/"*.h && fail "a comment still promises 501 for an unknown transfer coding"
grep -q "Transfer-Encoding" "$src/docs/server.md" || fail "docs/server.md says nothing about Transfer-Encoding"
grep -q "Transfer-Encoding: chunked\` alone" "$src/docs/architecture.md" || fail "docs/architecture.md lacks the framing rule"
grep -qi "ancestor" "$src/docs/operators.md" || fail "docs/operators.md does not say that ancestors are checked"
grep -q "ulimit -n" "$src/docs/operators.md" || fail "docs/operators.md does not say what a low nofile limit does"
grep -q "ulimit -n" "$src/docs/server.md" || fail "docs/server.md does not say what a low nofile limit does"
echo "docs_describe_framing_and_socket_checks: ok"
