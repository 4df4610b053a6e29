#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj vm --host-root and --fs: the guest (Debian's kernel under QEMU) runs
# this host's own programs on XFS and btrfs.
#  1. XFS with its log on the journal export, on a server started here
#     (fs=none, made XFS through this host's block layer, detached): the
#     guest runs xfs_info, dbench and fio from the host's root, over
#     virtio-9p; the server decodes the XFS log the guest's kernel writes
#     (GET /journal: format xfs, records, no CRC failing, no problem); then
#     xfs_repair -n on the host finds the filesystem clean.
#  2. btrfs on the server nvj vm starts itself (--fs btrfs: fs=none and
#     mkfs.btrfs on this host): the host's btrfs tool inside the guest sees
#     it mounted, a file written there reads back, and nvj-workload (the
#     initramfs's, first on PATH) runs there as without --host-root.
#  3. XFS with its log inside the data export (--log internal), made by
#     nvj vm: mounted without logdev=, xfs_info in the guest says so.
#  4. Usage errors (exit 2) naming what is wrong: --log for ext4, fs=ext4
#     with --fs xfs.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_guest
for c in mkfs.xfs xfs_repair xfs_info mkfs.btrfs btrfs dbench fio curl python3; do
  command -v "$c" >/dev/null || skip "$c is not installed"
done
qemu-system-x86_64 -device help 2>/dev/null | grep -q virtio-9p-pci || skip "this QEMU has no virtio-9p"

echo "== 1. XFS, its log on the journal export, the host's dbench and fio in the guest"
start_server x fs=none data=512M journal=64M data-model=ssd journal-model=nvram "control=$T/x.ctl"
attach x "$T/x.sock"
mkfs.xfs -q -l "logdev=$JOURNAL_DEV" "$DATA_DEV"
detach x
status=0
"$NVJ" vm -v --socket "$T/x.sock" --control "$T/x.ctl" --fs xfs --host-root -- sh -c '
  set -e
  grep " /mnt " /proc/mounts
  xfs_info /mnt | grep -E "^log +=" 
  dbench -c /usr/share/dbench/client.txt -t 5 2 | grep -E "^Throughput"
  fio --name=rw --directory=/mnt --rw=randwrite --bs=4k --size=16M --direct=1 --fsync=16 --output-format=json \
    >/tmp/fio.json
  grep -q "\"error\" : 0" /tmp/fio.json && echo "fio ok"
  echo "done in $(pwd)"' >"$T/x.out" 2>"$T/x.err" || status=$?
cat "$T/x.out" "$T/x.err"
[ "$status" = 0 ] || fail "nvj vm --fs xfs --host-root exited $status"
grep -q '^/dev/sda /mnt xfs .*logdev=/dev/sdb' "$T/x.out" || fail "no XFS with logdev=/dev/sdb at /mnt in the guest"
grep -q "^log *=/dev/sdb " "$T/x.out" || fail "xfs_info in the guest does not see its log on /dev/sdb"
grep -q '^Throughput [0-9.]* MB/sec' "$T/x.out" || fail "no dbench result from the guest"
grep -qx 'fio ok' "$T/x.out" || fail "fio did not run cleanly in the guest"
grep -qx 'done in /mnt' "$T/x.out" || fail "the command did not run in /mnt"
curl -sf --unix-socket "$T/x.ctl" http://lab/journal >"$T/x.journal.json" || fail "GET /journal failed"
check_json journal "$T/x.journal.json"
python3 - "$T/x.journal.json" <<'PY' || fail "the server did not follow the guest's XFS log"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == "xfs" and j["placement"] == "external", (j.get("format"), j.get("placement"))
assert j["records"] > 10 and j["checksum_errors"] == 0 and j["problems"] == 0, \
    (j["records"], j["checksum_errors"], j["recent_problems"])
assert j["log_write_latency_us"]["count"] > 0
print(f"the server followed {j['records']} records of the guest's XFS log, head {j['head_lsn']}, "
      f"log write p50 {j['log_write_latency_us']['p50']} us")
PY
attach x2 "$T/x.sock"
xfs_repair -n -l "$JOURNAL_DEV" "$DATA_DEV" >"$T/repair.out" 2>&1 || fail "xfs_repair -n: $(tail -5 "$T/repair.out")"
detach x2

echo "== 2. btrfs made by nvj vm on the server it starts"
status=0
"$NVJ" vm -v --fs btrfs --host-root data=512M -- sh -c '
  btrfs filesystem show /mnt | grep -c "devid" && echo kept >/mnt/file && sync && cat /mnt/file &&
  nvj-workload synctest /mnt/spool --processes 2 --passes 3 --fsync-file' \
  >"$T/b.out" 2>"$T/b.err" || status=$?
cat "$T/b.out" "$T/b.err"
[ "$status" = 0 ] || fail "nvj vm --fs btrfs --host-root exited $status"
grep -q 'making btrfs on /dev/loop' "$T/b.err" || fail "nvj vm did not make btrfs on this host"
grep -qx 1 "$T/b.out" || fail "the host's btrfs tool in the guest does not see one device"
grep -qx kept "$T/b.out" || fail "a file written on btrfs in the guest did not read back"
grep -q '^synctest: 2 processes' "$T/b.out" || fail "nvj-workload did not run in the host's root"
for pid in $(sed -nE 's/.*started \(pid ([0-9]+)\).*/\1/p' "$T/x.err" "$T/b.err"); do
  ! kill -0 "$pid" 2>/dev/null || fail "nvj vm left process $pid running"
done

echo "== 3. XFS with its log inside, made by nvj vm"
status=0
"$NVJ" vm -v --fs xfs --log internal --host-root -- sh -c 'grep " /mnt " /proc/mounts; xfs_info /mnt' \
  >"$T/i.out" 2>"$T/i.err" || status=$?
cat "$T/i.out" "$T/i.err"
[ "$status" = 0 ] || fail "nvj vm --fs xfs --log internal exited $status"
grep -q '^/dev/sda /mnt xfs ' "$T/i.out" || fail "no XFS at /mnt"
! grep -q 'logdev=' "$T/i.out" || fail "an internal log mounted with logdev="
grep -q '^log *=internal log' "$T/i.out" || fail "xfs_info does not see an internal log"
for pid in $(sed -nE 's/.*started \(pid ([0-9]+)\).*/\1/p' "$T/i.err"); do
  ! kill -0 "$pid" 2>/dev/null || fail "nvj vm left process $pid running"
done

echo "== 4. usage errors"
status=0
"$NVJ" vm --log internal -- true >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q -- "--log internal is XFS's" "$T/e1" || fail "--log with ext4: exit $status, $(cat "$T/e1")"
status=0
"$NVJ" vm --fs xfs fs=ext4 -- true >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "fs=ext4 with --fs xfs" "$T/e2" || fail "fs=ext4 with --fs xfs: exit $status, $(cat "$T/e2")"
echo "PASS"
