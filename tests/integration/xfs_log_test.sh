#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj journal inspect reads XFS logs the kernel wrote, and agrees with the
# kernel and with xfsprogs. An XFS on loop devices, its log external (64
# MiB, the least mkfs.xfs takes), mounted with 256 KiB log buffers (records
# with 8 header blocks):
#   - mounted and idle after a workload, the log read from its file: our
#     head LSN is the kernel's (sysfs log_head_lsn), our tail never ahead of
#     its log_tail_lsn, and the records with a CRC (the kernel's; mkfs writes
#     none) number its log writes (stats, the log line) within one;
#   - more rounds until the log wraps: the head again, then after the
#     unmount every record (block, cycle, tail, length, operations) is one
#     xfs_logprint -d lists, and no whole record's CRC fails;
#   - the JSON matches docs/schemas/xfs-log-inspect.schema.json; a damaged
#     record is counted; an internal log, as mkfs left it, is found from the
#     superblock and reads as xfs_logprint reads it; an XFS without
#     --journal for its external log, or with it for an internal one, is
#     refused, naming what is wrong.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
for c in mkfs.xfs xfs_logprint losetup python3; do command -v "$c" >/dev/null || skip "$c is not installed"; done
require_filesystems xfs

_loops=()
cleanup_loops() {
  local l
  for l in "${_loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
}
# The mount and the loop devices first, then lib.sh's cleanup (which keeps
# the scratch folder of a failed run where NVJ_TEST_KEEP says).
trap 'status=$?; set +e; mountpoint -q "$T/m" && umount "$T/m"; cleanup_loops; (exit $status); cleanup' EXIT

truncate -s 512M "$T/data.img"
truncate -s 64M "$T/log.img"
data=$(losetup -f --show "$T/data.img")
_loops+=("$data")
log=$(losetup -f --show "$T/log.img")
_loops+=("$log")
mkfs.xfs -q -l "logdev=$log" "$data"
mkdir -p "$T/m"
mount -o "logdev=$log,logbsize=256k" "$data" "$T/m"
sysfs=/sys/fs/xfs/$(basename "$data")

# workload ROUNDS: 4000 files made and removed per round, then sync.
workload() {
  local r i
  for ((r = 0; r < $1; r++)); do
    for ((i = 0; i < 4000; i++)); do echo "file $i" >"$T/m/f$i"; done
    rm -f "$T/m"/f*
  done
  sync
}

# agree_with_sysfs PHASE: the log read from its file, mounted and idle,
# against the kernel's sysfs. The kernel moves log_head_lsn when it switches
# a log buffer out, before the write reaches the file, and its log worker
# writes on its own (covering the log): the log is compared with a sysfs
# that reads the same before and after the reading, and the comparison is
# made again, up to 10 times a second apart, until one agrees.
agree_with_sysfs() {
  local try
  for ((try = 1; try <= 10; try++)); do
    sleep 1  # idle: nothing in flight
    if agree_once "$1"; then return 0; fi
  done
  echo "$1: no agreement in $((try - 1)) tries" >&2
  return 1
}

# sysfs_now: head, tail and log writes as the kernel counts them.
sysfs_now() {
  echo "$(cat "$sysfs/log/log_head_lsn") $(cat "$sysfs/log/log_tail_lsn") $(awk '$1 == "log" {print $2}' "$sysfs/stats/stats")"
}

agree_once() {
  local kernel after
  kernel=$(sysfs_now)
  "$NVJ" journal inspect "$T/data.img" --journal "$T/log.img" --json >"$T/$1.json" || fail "nvj journal inspect failed"
  after=$(sysfs_now)
  if [ "$kernel" != "$after" ]; then
    echo "$1: the kernel wrote its log meanwhile ($kernel, then $after); again"
    return 1
  fi
  check_json xfs-log-inspect "$T/$1.json"
  # shellcheck disable=SC2086  # three words: head, tail, writes
  python3 - "$T/$1.json" $kernel "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
head, tail, writes, phase = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
lsn = lambda s: tuple(int(x) for x in s.split(":"))
assert r["head_lsn"] == head, f"{phase}: our head {r['head_lsn']}, the kernel's {head}"
assert lsn(r["tail_lsn"]) <= lsn(tail), f"{phase}: our tail {r['tail_lsn']} is ahead of the kernel's {tail}"
assert r["crc_failures"] == 0, r["crc_failures"]
kernel = [x for x in r["records"] if x["crc"] == "ok" and not x["stale"]]
if phase == "first":  # nothing overwritten yet: every record the kernel wrote is there
    assert abs(len(kernel) - writes) <= 1, f"{len(kernel)} records with a CRC, the kernel counts {writes} log writes"
print(f"{phase}: head {r['head_lsn']} as the kernel's, tail {r['tail_lsn']} (kernel {tail}), "
      f"{len(kernel)} kernel records, {writes} log writes counted")
PY
}

workload 2
agree_with_sysfs first || fail "the first phase disagrees with the kernel's sysfs"
rounds=0
until [ "$(cut -d: -f1 "$sysfs/log/log_head_lsn")" -ge 2 ]; do
  workload 4
  rounds=$((rounds + 4))
  [ "$rounds" -le 80 ] || fail "the log did not wrap after $rounds rounds (head $(cat "$sysfs/log/log_head_lsn"))"
done
agree_with_sysfs wrapped || fail "after the wrap, we disagree with the kernel's sysfs"
umount "$T/m"

"$NVJ" journal inspect "$data" --journal "$log" --json >"$T/after.json"
check_json xfs-log-inspect "$T/after.json"
xfs_logprint -d -l "$log" "$data" >"$T/logprint.txt" 2>&1 || fail "xfs_logprint failed: $(tail -3 "$T/logprint.txt")"
python3 - "$T/after.json" "$T/logprint.txt" <<'PY' || fail "our records are not xfs_logprint's"
import json, re, sys
r = json.load(open(sys.argv[1]))
ours = [(x["block"], x["cycle"], x["tail_lsn"], x["len"], x["operations"]) for x in r["records"]]
theirs = []
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+) HEADER Cycle (\d+) tail (\d+):(\d+) len\s+(\d+) ops (\d+)", line)
    if m and int(m[2]) != 0:  # cycle 0: the log as mkfs cleared it
        b, c, tc, tb, n, ops = map(int, m.groups())
        theirs.append((b, c, f"{tc}:{tb}", n, ops))
assert len(ours) > 100, f"only {len(ours)} records"
assert ours == theirs, f"{len(ours)} records against {len(theirs)}; first difference: " + \
    str(next(((a, b) for a, b in zip(ours, theirs) if a != b), (ours[len(theirs):] or theirs[len(ours):])[:1]))
assert any(x["cycle"] == 2 for x in r["records"]) and any(x["cycle"] == 1 for x in r["records"]), "no wrap in the log"
assert r["crc_failures"] == 0 and all(x["crc"] in ("ok", "absent") or x["stale"] for x in r["records"])
assert all(x["size"] == 262144 for x in r["records"] if x["crc"] == "ok"), "not 256 KiB log buffers"
print(f"{len(ours)} records, as xfs_logprint -d lists them; head {r['head_lsn']}, tail {r['tail_lsn']}")
PY

# A damaged record: a data byte of the newest record turned, on a copy.
cp --sparse=always "$T/log.img" "$T/damaged.img"
python3 - "$T/after.json" "$T/damaged.img" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
newest = next(x for x in r["records"] if x["block"] == r["newest_block"])
at = (newest["block"] + newest["size"] // 32768 + 0) * 512 + 100  # past its header blocks, into its data
with open(sys.argv[2], "r+b") as f:
    f.seek(at)
    b = f.read(1)
    f.seek(at)
    f.write(bytes([b[0] ^ 0x5A]))
PY
"$NVJ" journal inspect "$T/data.img" --journal "$T/damaged.img" --json >"$T/damaged.json"
python3 - "$T/after.json" "$T/damaged.json" <<'PY' || fail "a damaged record was not counted"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b["crc_failures"] == 1, b["crc_failures"]
bad = [x for x in b["records"] if x["crc"] == "bad"]
assert [x["block"] for x in bad] == [a["newest_block"]], bad
assert b["newest_block"] != a["newest_block"], "a record whose CRC fails is not the newest"
PY

# An internal log, as mkfs.xfs leaves it (no mount): found from the
# superblock in the data device, its records xfs_logprint's.
truncate -s 512M "$T/internal.img"
mkfs.xfs -q "$T/internal.img"
"$NVJ" journal inspect "$T/internal.img" --json >"$T/internal.json"
check_json xfs-log-inspect "$T/internal.json"
xfs_logprint -d -f "$T/internal.img" >"$T/internal.txt" 2>&1 || fail "xfs_logprint -f failed: $(tail -3 "$T/internal.txt")"
python3 - "$T/internal.json" "$T/internal.txt" <<'PY' || fail "the internal log's records are not xfs_logprint's"
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["placement"] == "internal" and r["records"], r
ours = [(x["cycle"], x["tail_lsn"], x["len"], x["operations"]) for x in r["records"]]
theirs = [(int(m[1]), f"{int(m[2])}:{int(m[3])}", int(m[4]), int(m[5])) for m in
          (re.match(r"\s*\d+ HEADER Cycle (\d+) tail (\d+):(\d+) len\s+(\d+) ops (\d+)", l) for l in open(sys.argv[2]))
          if m and int(m[1]) != 0]
assert ours == theirs, (ours, theirs)
PY
status=0
"$NVJ" journal inspect "$T/internal.img" --journal "$T/log.img" >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "with its log inside: no --journal" "$T/e2" || fail "--journal for an internal log: exit $status, $(cat "$T/e2")"

status=0
"$NVJ" journal inspect "$T/data.img" >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "log is on another device: --journal LOG" "$T/e1" || fail "no --journal: exit $status, $(cat "$T/e1")"
echo "PASS"
