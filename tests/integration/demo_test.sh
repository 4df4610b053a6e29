#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj demo, the older short tour, end to end on a small workload: it prints
# the summary with a clean e2fsck, exits 0 and leaves nothing behind. Bad
# options are usage errors.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

"$NVJ" demo --files 100 --threads 2 | tee "$T/out"
grep -q '^  e2fsck      clean$' "$T/out"
grep -q '^  throughput  [0-9.]* files/s$' "$T/out"
grep -q '^  workload    fs_mark, 200 files of 10240 bytes, 2 threads' "$T/out"
grep -q '^  journal     [0-9]* transactions' "$T/out"
grep -q '^  teardown    unmounted, detached, server stopped$' "$T/out"
# The devices' side: the journal took writes, the data disk flushes.
grep -q "^What the devices saw" "$T/out"
grep -Eq '^  journal +write +[1-9][0-9]* ' "$T/out"
grep -Eq '^  data +flush +[1-9][0-9]* ' "$T/out"
# Its own leftovers only: other kernel tests may hold loop devices meanwhile.
# (No bare `! cmd` here: set -e ignores a negated command.)
if losetup -a | grep -q '/run/nvjournal/demo-'; then echo "a loop device is left"; exit 1; fi
if grep -q '/run/nvjournal/demo-' /proc/self/mountinfo; then echo "a mount is left"; exit 1; fi
if ls -d /run/nvjournal/demo-* 2>/dev/null; then echo "the run folder is left"; exit 1; fi

for bad in "--threads 0" "--files x" "--bogus" "extra"; do
  status=0
  "$NVJ" demo $bad 2>"$T/err" || status=$?
  [ "$status" = 2 ] || { echo "nvj demo $bad: exit $status"; exit 1; }
  grep -q '^nvj demo: ' "$T/err"
done
status=0; "$NVJ" frobnicate 2>"$T/err" || status=$?
[ "$status" = 2 ] || fail "nvj frobnicate: exit $status, expected 2"
grep -q "unknown command 'frobnicate'" "$T/err" || fail "nvj frobnicate: no 'unknown command' in: $(cat "$T/err")"
echo "PASS"
