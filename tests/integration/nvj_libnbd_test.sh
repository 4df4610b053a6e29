#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj loads libnbd when it first speaks NBD, not when it starts
# (tools/nvj/client/libnbd_on_demand.cpp): the dynamic loader must not open
# libnbd for `nvj --version` or `nvj stats --help`; `nvj bench` against a
# real server must open it and measure; and where libnbd cannot be loaded,
# `nvj bench` must fail with exit 1 and an error naming the library and the
# package, while `nvj --version` still works.
#
# Needs NVJ and NVJ_PLUGIN (ctest sets them) and nbdkit. The last part needs
# root and unshare (a private mount namespace hides libnbd from nvj alone);
# without them it is skipped and the test says so. A few seconds.
source "$(dirname "$0")/lib.sh"
command -v nbdkit >/dev/null || skip "nbdkit is not installed"

# opened PROGRAM-AND-ARGS... : the shared objects the dynamic loader opened
# for that call, one per line (LD_DEBUG=files), its own output in $T/out.
opened() {
  LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld" "$@" >"$T/out" 2>&1
  local status=$?
  sed -n 's/.*file=\([^ ]*\) \[0\];  \(needed\|dynamically loaded\) by .*/\1/p' "$T"/ld.* | sort -u
  rm -f "$T"/ld.*
  return "$status"
}

# --- start-up: no libnbd -------------------------------------------------------
for call in "--version" "stats --help" "bench --help"; do
  # shellcheck disable=SC2086  # the words of the call
  libs=$(opened "$NVJ" $call) || { cat "$T/out"; fail "nvj $call failed"; }
  [ -n "$libs" ] || fail "LD_DEBUG=files showed nothing for nvj $call: the check would not see libnbd"
  grep -qx 'libstdc++.so.6' <<<"$libs" || fail "the loader's list for nvj $call lacks libstdc++: $libs"
  if grep -q 'libnbd' <<<"$libs"; then fail "nvj $call loaded libnbd at start-up: $(tr '\n' ' ' <<<"$libs")"; fi
done
grep -q '^nvj ' <<<"$("$NVJ" --version)" || fail "nvj --version printed no version"

# --- bench: libnbd loaded when the first handle is made, and it works ----------
start_server lab data=64M data-model=none journal-model=none
uri="nbd+unix:///data?socket=$T/lab.sock"
libs=$(opened "$NVJ" bench "$uri" --duration 1 --json) || { cat "$T/out"; fail "nvj bench failed"; }
grep -qx 'libnbd.so.0' <<<"$libs" || fail "nvj bench did not load libnbd.so.0: $(tr '\n' ' ' <<<"$libs")"
python3 - "$T/out" <<'EOF' || fail "nvj bench measured nothing: $(cat "$T/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] > 0 and r["iops"] > 0, r
EOF

# --- no libnbd: a clear error where NBD is needed, nothing else broken ---------
[ "$(id -u)" = 0 ] || skip "start-up and bench checked; hiding libnbd needs root (a private mount namespace)"
command -v unshare >/dev/null || skip "start-up and bench checked; hiding libnbd needs unshare (util-linux)"
lib=$(ldconfig -p | sed -n 's/^\s*libnbd\.so\.0 .* => //p' | head -n 1)
[ -e "$lib" ] || fail "ldconfig names no libnbd.so.0, yet nvj bench loaded it"
# In the namespace, libnbd is an empty file: dlopen fails as it would
# without the package. The mount goes with the namespace.
hidden() { unshare --mount --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" "$@"; }
status=0
hidden "$NVJ" bench "$uri" --duration 1 >"$T/hidden.out" 2>&1 || status=$?
[ "$status" = 1 ] || fail "nvj bench without libnbd exited $status, not 1: $(cat "$T/hidden.out")"
grep -q 'libnbd.so.0' "$T/hidden.out" || fail "the error does not name libnbd.so.0: $(cat "$T/hidden.out")"
grep -q 'libnbd0 package' "$T/hidden.out" || fail "the error does not name the package: $(cat "$T/hidden.out")"
grep -q '^nvj bench: ' "$T/hidden.out" || fail "the error does not name the command: $(cat "$T/hidden.out")"
hidden "$NVJ" --version >"$T/hidden.out" 2>&1 || fail "nvj --version failed without libnbd: $(cat "$T/hidden.out")"
grep -q '^nvj ' "$T/hidden.out" || fail "nvj --version printed no version without libnbd"
# The host still has its libnbd.
[ -s "$lib" ] || fail "$lib looks empty outside the namespace"
echo "PASS: libnbd on demand"
