#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj attach / detach: prints a device per export (loop devices in direct
# I/O on nbdfuse's files, or with --buffered not), detach removes everything
# it created (loop devices, FUSE mounts, nbdfuse processes, state), refuses
# while a device is mounted, and cleans up after a failed attach and after
# the server went away.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

leftovers() {  # loop devices, FUSE mounts or nbdfuse processes of this test
  losetup -a | grep -F "$T" || true
  grep -F "$T" /proc/self/mountinfo || true
  pgrep -a nbdfuse | grep -F "$T" || true
}

start_server a data=64M journal=8M
attach one "$T/a.sock"
[ "$DATA_DEV" != "$JOURNAL_DEV" ]
[ "$(blockdev --getsize64 "$DATA_DEV")" = $((64 << 20)) ]
[ "$(blockdev --getsize64 "$JOURNAL_DEV")" = $((8 << 20)) ]
# The nbdfuse path: the loop devices read and write nbdfuse's files with
# direct I/O (each request of the filesystem reaches the server as it is),
# and with --buffered through their page cache.
dio() { cat "/sys/block/$(basename "$1")/loop/dio"; }
if [ -e "/sys/block/$(basename "$DATA_DEV")/loop" ]; then
  [ "$(dio "$DATA_DEV")" = 1 ] && [ "$(dio "$JOURNAL_DEV")" = 1 ] || fail "the loop devices are not in direct I/O"
  out=$("$NVJ" attach --state "$T/buffered.attach" --export journal --buffered "$T/a.sock")
  [ "$(dio "$(echo "$out" | awk '{print $2}')")" = 0 ] || fail "--buffered: the loop device is in direct I/O"
  "$NVJ" detach --state "$T/buffered.attach"
fi
# A write through the block device reaches the server.
printf 'through the kernel' | dd of="$JOURNAL_DEV" bs=4096 conv=sync,fsync status=none
[ "$(nbdcopy "nbd+unix:///journal?socket=$T/a.sock" - | head -c 18)" = "through the kernel" ]

echo "== a second attach into the same state folder is refused"
if "$NVJ" attach --state "$T/one.attach" "$T/a.sock" 2>"$T/err"; then exit 1; fi
grep -q "already" "$T/err"

echo "== detach refuses while mounted, and keeps the attachment"
mkfs.ext4 -q -F "$DATA_DEV"
mkdir "$T/m"
mount "$DATA_DEV" "$T/m"
_mounts+=("$T/m")
if "$NVJ" detach --state "$T/one.attach" 2>"$T/err"; then exit 1; fi
grep -q "is mounted on $T/m" "$T/err"
[ -b "$DATA_DEV" ] || fail "the refused detach removed $DATA_DEV"
[ -n "$(leftovers)" ] || fail "the refused detach took the attachment down"
umount "$T/m"
detach one
[ -z "$(leftovers)" ] || { echo "left behind:"; leftovers; exit 1; }
[ ! -e "$T/one.attach" ]

echo "== attaching an export the server lacks fails and leaves nothing"
if "$NVJ" attach --state "$T/two.attach" --export data --export nosuch "$T/a.sock" 2>"$T/err"; then exit 1; fi
grep -q "no export named 'nosuch'" "$T/err"
[ -z "$(leftovers)" ] || { echo "left behind:"; leftovers; fail "the failed attach left devices behind"; }
[ ! -e "$T/two.attach/attach.log" ] || fail "the failed attach left its state folder"

echo "== detach after the server died"
attach three "$T/a.sock"
kill -9 "$SERVER_PID"; wait "$SERVER_PID" || true
detach three
[ -z "$(leftovers)" ] || { echo "left behind:"; leftovers; exit 1; }

echo "== bad usage"
if "$NVJ" attach 2>"$T/err"; then exit 1; fi
grep -q "which server" "$T/err"
if "$NVJ" attach --bogus x 2>"$T/err"; then exit 1; fi
grep -q "unknown option '--bogus'" "$T/err"
if "$NVJ" detach --state "$T/none" 2>"$T/err"; then exit 1; fi
grep -q "nothing is attached" "$T/err"
echo "PASS"
