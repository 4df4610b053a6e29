#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# shell_checks.py finds what it is meant to and nothing else: on
# planted.sh.fixture it reports exactly the lines marked "planted", as
# FILE:LINE, and exits 1; scanning a folder it checks the *.sh files and the
# scripts with a bash or sh #! line, not other files; a script it cannot parse
# is a failure naming it; a clean script passes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checker=$here/shell_checks.py
fixture=$here/planted.sh.fixture
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shell_checks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# run_checker OUT ARGS... : shell_checks.py ARGS into OUT; sets STATUS.
run_checker() {
  local out=$1; shift
  STATUS=0
  python3 "$checker" "$@" >"$out" 2>&1 || STATUS=$?
}

echo "== the planted lines are reported, and only they"
run_checker "$tmp/out" "$fixture"
cat "$tmp/out"
[ "$STATUS" = 1 ] || fail "exit $STATUS on the fixture, expected 1"
expected=$(grep -n '# planted$' "$fixture" | cut -d: -f1)
reported=$(sed -n "s|^$fixture:\([0-9]*\): .*|\1|p" "$tmp/out")
[ "$(wc -l <<<"$expected")" -ge 15 ] || fail "fewer planted lines than expected in $fixture"
[ "$reported" = "$expected" ] ||
  fail "reported lines differ from the planted ones (< planted, > reported):
$(diff <(echo "$expected") <(echo "$reported"))"

echo "== a folder: *.sh files and #! scripts, nothing else"
mkdir -p "$tmp/tree/sub"
printf '[ -e x ] && rm x\necho done\n' >"$tmp/tree/sub/a.sh"
printf '#!/usr/bin/env bash\nset -e\n\n[ -n "$1" ] && echo "$1"\n' >"$tmp/tree/tool"
printf '#!/bin/sh\ntest -e y && echo y\n' >"$tmp/tree/posix"
printf '[ -e x ] && rm x\n' >"$tmp/tree/notes.txt"
printf '#!/usr/bin/python3\n[ -e x ] && rm x\n' >"$tmp/tree/script.py"
run_checker "$tmp/out" "$tmp/tree"
cat "$tmp/out"
[ "$STATUS" = 1 ] || fail "exit $STATUS on the folder, expected 1"
[ "$(grep -c "^$tmp/tree/" "$tmp/out")" = 3 ] || fail "expected 3 findings in the folder"
grep -q "^$tmp/tree/sub/a.sh:1: " "$tmp/out" || fail "a.sh:1 not reported"
grep -q "^$tmp/tree/tool:4: " "$tmp/out" || fail "tool:4 not reported"
grep -q "^$tmp/tree/posix:2: " "$tmp/out" || fail "posix:2 not reported"

echo "== a script that cannot be parsed fails, naming it"
printf 'cat <<EOF\nnever ends\n' >"$tmp/broken.sh"
run_checker "$tmp/out" "$tmp/broken.sh"
cat "$tmp/out"
[ "$STATUS" = 1 ] || fail "exit $STATUS on a broken script, expected 1"
grep -q "^$tmp/broken.sh: cannot parse: " "$tmp/out" || fail "the broken script is not named"

echo "== a clean script passes"
printf 'set -e\n[ -e x ] || exit 1\nif [ -e y ] && [ -e z ]; then echo yz; fi\n' >"$tmp/clean.sh"
run_checker "$tmp/out" "$tmp/clean.sh"
cat "$tmp/out"
[ "$STATUS" = 0 ] || fail "exit $STATUS on a clean script, expected 0"

echo "== a path that does not exist is a usage error"
run_checker "$tmp/out" "$tmp/nosuch"
[ "$STATUS" = 2 ] || fail "exit $STATUS for a missing path, expected 2"
grep -q "nosuch: no such file or folder" "$tmp/out" || fail "the missing path is not named"
echo "PASS"
