#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj vm: Debian's kernel booted under QEMU (software emulation) on the
# server's exports, through QEMU's own NBD client.
#  1. A command's output and exit status come back, and nothing of the
#     kernel's boot with them; the command sees the server's ext4 mounted at
#     /mnt (its journal on /dev/sdb) and runs a workload there (synctest).
#  2. The crash variant: writers with an fsync after every chunk, the power
#     cut after it (the data disk's cache lost), QEMU killed; the second
#     boot's mount replays the journal and writers --verify finds every
#     chunk. data=journal, as the lab is meant to be used: with the journal
#     on another device and ordered data, Debian 12's kernel loses
#     acknowledged rewrites of a block that is already allocated (its fsync
#     trusts a data-disk flush the journal commit does not send), which
#     nvj vm shows but which is the kernel's, not this test's, business.
#  3. The negative control, on a server started here and reached over TCP
#     on the loopback address with TLS-PSK (--socket nbds://... --tls-psk):
#     without fsync the same cut loses the chunks, and --verify says so
#     (exit 1).
#  4. A guest that fails (a bad mount option) and one that runs out of time
#     end with exit 1 and the console's last lines; bad options are usage
#     errors (exit 2) naming the option, a missing kernel names its path;
#     nothing is left running or behind.
source "$(dirname "$0")/lib.sh"

command -v nbdkit >/dev/null || skip "nbdkit is not installed"
require_guest
require_static_workload

echo "== 1. output, exit status, the mounted filesystem, a workload"
status=0
"$NVJ" vm -v -- sh -c 'echo hello; grep " /mnt " /proc/mounts; echo kept >/mnt/file; cat /mnt/file
  nvj-workload synctest /mnt/spool --processes 4 --passes 10 --fsync-file --fsync-dir || exit 9
  exit 3' >"$T/out" 2>"$T/err" || status=$?
cat "$T/out" "$T/err"
remember_vm_run "$T/err"
[ "$status" = 3 ] || fail "exit $status, expected the command's 3"
[ "$(head -n 1 "$T/out")" = hello ] || fail "the first line is not the command's"
grep -q '^/dev/sda /mnt ext4 ' "$T/out" || fail "no ext4 on /dev/sda at /mnt"
grep -qx kept "$T/out" || fail "the file written in the guest did not read back"
grep -q '^synctest: 4 processes' "$T/out" || fail "no synctest result"
grep -q '^  fsync file ' "$T/out" || fail "no fsync latencies from synctest"
if grep -Eq 'Linux version|Run /init|nvj-vm:|^\[ *[0-9]+\.[0-9]+\]' "$T/out"; then
  fail "the kernel's messages or the markers reached the command's output"
fi
grep -q 'QEMU started' "$T/err" || fail "no QEMU PID reported"

echo "== 2. crash: fsync each, power cut, journal replayed, every chunk there"
W=(nvj-workload writers /mnt/w --tasks 20 --chunks 40)
status=0
"$NVJ" vm -v --crash --mount-options data=journal -- "${W[@]}" --fsync each --then "${W[@]}" --fsync each --verify \
  >"$T/out" 2>"$T/err" || status=$?
cat "$T/out" "$T/err"
remember_vm_run "$T/err"
[ "$status" = 0 ] || fail "crash run: exit $status"
grep -q '^writers: 20 tasks x 40 chunks' "$T/out" || fail "boot 1's writers did not run"
grep -q '^writers --verify: 20 tasks x 40 chunks of round 0: every chunk is there$' "$T/out" || fail "verify"
grep -q 'boot 2: the kernel: EXT4-fs (sda): recovery complete' "$T/err" || fail "the kernel did not replay the journal"
grep -Eq '^nvj vm: boot 1: nvj-workload writers .* exited 0; power cut \([0-9]+ writes lost\); boot 2: journal replayed; nvj-workload writers .*--verify exited 0$' \
  "$T/err" || fail "no summary of the crash"
[ "$(grep -c 'QEMU started' "$T/err")" = 2 ] || fail "not two boots"

echo "== 3. negative control (a server of our own, over TCP and TLS-PSK): no fsync, the cut loses the chunks"
(umask 077; printf 'lab:%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$T/lab.psk")
start_tls_server neg "$T/lab.psk" "control=$T/neg.ctl"
status=0
"$NVJ" vm -v --socket "nbds://127.0.0.1:$SERVER_PORT" --tls-psk "$T/lab.psk" --control "$T/neg.ctl" --crash -- \
  "${W[@]}" --fsync none --then "${W[@]}" --verify >"$T/out" 2>"$T/err" || status=$?
cat "$T/out" "$T/err"
remember_vm_run "$T/err"
grep -q "tls-creds-psk,id=nvj-tls,endpoint=client,.*,username=lab" "$T/err" || fail "QEMU was not given the key"
grep -q "file.server.host=127.0.0.1,file.server.port=$SERVER_PORT,file.export=data,file.tls-creds=nvj-tls" "$T/err" ||
  fail "QEMU's data disk is not the TLS export on TCP"
[ "$status" = 1 ] || fail "without fsync: exit $status, expected --verify's 1"
grep -Eq '^writers --verify: [0-9]+ of 20 tasks lost acknowledged chunks of round 0:$' "$T/out" || fail "no losses listed"
grep -q 'nbdkit started' "$T/err" && fail "nvj vm started a server although given one"
kill -0 "$SERVER_PID" 2>/dev/null || fail "nvj vm stopped a server it did not start"
curl -sf --unix-socket "$T/neg.ctl" http://lab/stats >/dev/null || fail "the server's power is still off"
stop_server "$SERVER_PID"

echo "== 4. failures"
# A mount the kernel refuses: the guest says what failed, the console shows why.
status=0
"$NVJ" vm -v --mount-options nosuchoption -- true >"$T/out" 2>"$T/err" || status=$?
cat "$T/err"
remember_vm_run "$T/err"
[ "$status" = 1 ] || fail "a failed mount: exit $status"
grep -q 'the guest says: mount -t ext4 -o nosuchoption' "$T/err" || fail "the failed mount is not named"
grep -q "the console's last lines" "$T/err" || fail "no console lines"
# Out of time: QEMU is stopped.
status=0
"$NVJ" vm -v --timeout 2 -- true >"$T/out" 2>"$T/err" || status=$?
cat "$T/err"
remember_vm_run "$T/err"
[ "$status" = 1 ] || fail "a timeout: exit $status"
grep -q 'after 2 s (--timeout)' "$T/err" || fail "the timeout is not named"

expect_status() {  # expect_status STATUS PATTERN ARGS...
  local want=$1 pattern=$2 status=0; shift 2
  "$NVJ" "$@" >/dev/null 2>"$T/err" || status=$?
  [ "$status" = "$want" ] || { cat "$T/err"; fail "nvj $*: exit $status, expected $want"; }
  grep -q -- "$pattern" "$T/err" || { cat "$T/err"; fail "nvj $*: no '$pattern'"; }
}
expect_status 2 "unknown option '--bogus'" vm --bogus -- true
expect_status 2 "no command given" vm
expect_status 2 "no command given" vm --crash --
expect_status 2 "--then needs a command" vm -- true --then
expect_status 2 "--policy=often: expected all, random or reorder" vm --crash --policy often -- true
expect_status 2 "--policy and --seed describe the power cut" vm --seed 3 -- true
expect_status 2 "--crash with --socket needs --control" vm --crash --socket "$T/none.sock" -- true
expect_status 2 "--tls-psk and --tls-username go with --socket nbds://" vm --tls-psk "$T/lab.psk" -- true
expect_status 1 "asks for TLS but names no key: give the PSK file with --tls-psk FILE" vm --socket nbds://127.0.0.1:1/ -- true
expect_status 2 "data=2G: plugin parameters configure the server nvj vm starts" vm --socket "$T/none.sock" data=2G -- true
expect_status 2 "--memory=1K" vm --memory 1K -- true
expect_status 2 "--kernel /nonexistent/vmlinuz: no such file" vm --kernel /nonexistent/vmlinuz -- true
expect_status 2 "nvj writers: Could not convert: --verify = maybe" writers "$T/w" --verify=maybe

echo "== nothing left"
expect_vm_runs_gone 7
echo "PASS"
