#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The server decodes XFS logs live and agrees with the kernel and xfsprogs.
# fs=none exports attached on this host (nbdfuse + loop, direct I/O), made
# XFS by mkfs.xfs, mounted with 256 KiB log buffers, a workload written:
#   - external log on the journal export: mounted and idle, GET /journal's
#     head_lsn is the kernel's (sysfs log_head_lsn), its tail_lsn is never
#     ahead of log_tail_lsn, and its records since POST /reset-stats number
#     the kernel's log writes over the same time (stats, the log line)
#     within one, no CRC failing, every record durable with a latency; the
#     same again once the log has wrapped (records split at its end);
#   - after the unmount, every recent record (LSN, tail, length, operations)
#     is one `xfs_logprint -d` lists for the same log device;
#   - an internal log, found from the superblock mkfs.xfs writes: the same
#     agreements with sysfs, its writes counted as journal traffic;
#   - the JSON matches docs/schemas/journal.schema.json, nvj journal top
#     and the metrics show the log, and promtool accepts the metrics.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
for c in mkfs.xfs xfs_logprint curl python3; do command -v "$c" >/dev/null || skip "$c is not installed"; done
require_filesystems xfs

get() { curl -sf --unix-socket "$T/$1.ctl" "http://lab$2"; }

# workload DIR ROUNDS: 2000 files made and removed per round, then sync.
workload() {
  local r i
  for ((r = 0; r < $2; r++)); do
    for ((i = 0; i < 2000; i++)); do echo "file $i" >"$1/f$i"; done
    rm -f "$1"/f*
  done
  sync
}

# agree NAME SYSFS WRITES_BEFORE PHASE PLACEMENT: GET /journal, mounted and
# idle, against the kernel's sysfs. The kernel moves log_head_lsn when it
# switches a log buffer out, before the write reaches the export, and its
# log worker writes on its own (covering the log): the view is compared
# with a sysfs that reads the same before and after GET /journal, and the
# comparison is made again, up to 10 times a second apart, until one agrees.
agree() {
  local name=$1 sysfs=$2 before=$3 phase=$4 placement=$5 try
  for ((try = 1; try <= 10; try++)); do
    sleep 1  # idle: nothing in flight
    if agree_once "$@"; then return 0; fi
  done
  echo "$phase: no agreement in $((try - 1)) tries" >&2
  return 1
}

# sysfs_now SYSFS: head, tail and log writes as the kernel counts them.
sysfs_now() {
  echo "$(cat "$1/log/log_head_lsn") $(cat "$1/log/log_tail_lsn") $(awk '$1 == "log" {print $2}' "$1/stats/stats")"
}

agree_once() {
  local name=$1 sysfs=$2 before=$3 phase=$4 placement=$5 kernel after
  kernel=$(sysfs_now "$sysfs")
  get "$name" /journal >"$T/$name.$phase.json" || fail "GET /journal failed"
  after=$(sysfs_now "$sysfs")
  if [ "$kernel" != "$after" ]; then
    echo "$phase: the kernel wrote its log meanwhile ($kernel, then $after); again"
    return 1
  fi
  check_json journal "$T/$name.$phase.json"
  # shellcheck disable=SC2086  # three words: head, tail, writes
  python3 - "$T/$name.$phase.json" $kernel "$before" "$name $phase" "$placement" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
head, tail, writes, before, phase, placement = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
lsn = lambda s: tuple(int(x) for x in s.split(":"))
assert j["format"] == "xfs" and j["placement"] == placement, (j["format"], j["placement"])
assert j["synchronized"], f"{phase}: no whole record seen"
assert j["head_lsn"] == head, f"{phase}: our head {j['head_lsn']}, the kernel's {head}"
assert lsn(j["tail_lsn"]) <= lsn(tail), f"{phase}: our tail {j['tail_lsn']} is ahead of the kernel's {tail}"
kernel = writes - before
assert abs(j["records"] - kernel) <= 1, f"{phase}: {j['records']} records, the kernel counts {kernel} log writes"
assert j["checksum_errors"] == 0 and j["problems"] == 0, (j["checksum_errors"], j["recent_problems"])
assert j["crc_absent"] == 0, f"{phase}: {j['crc_absent']} kernel records without a CRC"
lat = j["log_write_latency_us"]
assert lat["count"] >= j["records"] - 1 and lat["p50"] > 0, f"{phase}: {lat} for {j['records']} records"
assert all(r["crc"] == "ok" and r["size"] == 262144 for r in j["recent"]), "not the kernel's 256 KiB records"
assert j["log_bytes"] > 0 and j["log_bytes_per_second"] > 0
print(f"{phase}: head {j['head_lsn']} as the kernel's, tail {j['tail_lsn']} (kernel {tail}), {j['records']} records "
      f"against {kernel} log writes, log write p50 {lat['p50']} us, {j['log_bytes']} bytes, fill {j['fill_ratio']}")
PY
}

# reset NAME SYSFS: POST /reset-stats at an idle moment; prints the kernel's
# log writes then.
reset() {
  sleep 1
  awk '$1 == "log" {print $2}' "$2/stats/stats"
  curl -sf --unix-socket "$T/$1.ctl" -X POST http://lab/reset-stats >/dev/null || fail "POST /reset-stats failed"
}

# --- The log external, on the journal export (64 MiB: mkfs.xfs's least).
start_server ext fs=none data=512M journal=64M "control=$T/ext.ctl"
attach ext "$T/ext.sock"
mkfs.xfs -q -l "logdev=$JOURNAL_DEV" "$DATA_DEV"
mkdir -p "$T/m"
mount -o "logdev=$JOURNAL_DEV,logbsize=256k" "$DATA_DEV" "$T/m"
_mounts+=("$T/m")
sysfs=/sys/fs/xfs/$(basename "$DATA_DEV")
before=$(reset ext "$sysfs")
workload "$T/m" 2
agree ext "$sysfs" "$before" first external || fail "the live decode disagrees with the kernel's sysfs"
get ext "/journal?format=text" >"$T/ext.txt"
grep -q "^xfs log (external, following the log): " "$T/ext.txt" || fail "the text view: $(head -3 "$T/ext.txt")"
# nvj journal top's head is the kernel's (read before and after it, as in agree).
for ((try = 1; try <= 10; try++)); do
  head=$(cat "$sysfs/log/log_head_lsn")
  "$NVJ" journal top "$T/ext.ctl" --once >"$T/top.txt" || fail "nvj journal top failed"
  [ "$head" != "$(cat "$sysfs/log/log_head_lsn")" ] || ! grep -q "^head $head, tail " "$T/top.txt" || break
  sleep 1
done
[ "$try" -le 10 ] || fail "nvj journal top: $(head -3 "$T/top.txt"), the kernel's head $head"
get ext /metrics >"$T/ext.metrics"
grep -q '^nvjournal_xfs_log_records_total [1-9]' "$T/ext.metrics" || fail "no XFS log records in the metrics"
grep -q '^nvjournal_xfs_log_write_seconds_count [1-9]' "$T/ext.metrics" || fail "no log write latency in the metrics"
if command -v promtool >/dev/null; then
  promtool check metrics <"$T/ext.metrics" || fail "promtool finds fault with the metrics"
fi

# Until the log wraps: records split at its end.
before=$(reset ext "$sysfs")
rounds=0
until [ "$(cut -d: -f1 "$sysfs/log/log_head_lsn")" -ge 2 ]; do
  workload "$T/m" 4
  rounds=$((rounds + 4))
  [ "$rounds" -le 200 ] || fail "the log did not wrap after $rounds rounds (head $(cat "$sysfs/log/log_head_lsn"))"
done
workload "$T/m" 1
agree ext "$sysfs" "$before" wrapped external || fail "after the wrap, the live decode disagrees with the kernel"
umount "$T/m"
get ext /journal >"$T/ext.unmounted.json"
released "$DATA_DEV" "$JOURNAL_DEV" || fail "the exports were not released after the unmount"
xfs_logprint -d -l "$JOURNAL_DEV" "$DATA_DEV" >"$T/logprint.txt" 2>&1 ||
  fail "xfs_logprint failed: $(tail -3 "$T/logprint.txt")"
python3 - "$T/ext.unmounted.json" "$T/logprint.txt" <<'PY' || fail "the live records are not xfs_logprint's"
import json, re, sys
j = json.load(open(sys.argv[1]))
theirs = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+) HEADER Cycle (\d+) tail (\d+):(\d+) len\s+(\d+) ops (\d+)", line)
    if m:
        b, c, tc, tb, n, ops = map(int, m.groups())
        theirs[f"{c}:{b}"] = (f"{tc}:{tb}", n, ops)
ours = {r["lsn"]: (r["tail_lsn"], r["len"], r["operations"]) for r in j["recent"]}
assert len(ours) == 64, f"{len(ours)} recent records"
missing = {k: v for k, v in ours.items() if theirs.get(k) != v}
assert not missing, f"{len(missing)} of our records are not xfs_logprint's: " + str(list(missing.items())[:3])
newest = j["recent"][-1]
cycle, block = map(int, newest["lsn"].split(":"))
end = block + newest["blocks"]
assert j["head_lsn"] == f"{cycle + end // j['log_blocks']}:{end % j['log_blocks']}", (j["head_lsn"], newest)
print(f"{len(ours)} recent records as xfs_logprint -d lists them, the newest {newest['lsn']}, the head after it")
PY

# --- An internal log: found from the superblock mkfs.xfs writes.
start_server int fs=none data=512M "control=$T/int.ctl"
attach int "$T/int.sock"
mkfs.xfs -q "$DATA_DEV"
mkdir -p "$T/i"
mount -o logbsize=256k "$DATA_DEV" "$T/i"
_mounts+=("$T/i")
sysfs=/sys/fs/xfs/$(basename "$DATA_DEV")
before=$(reset int "$sysfs")
workload "$T/i" 2
agree int "$sysfs" "$before" internal internal || fail "the internal log's live decode disagrees with the kernel"
python3 - "$T/int.internal.json" <<'PY' || fail "the internal log's writes are not journal traffic"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["traffic"]["journal"]["bytes"] >= j["log_bytes"] > 0, (j["traffic"]["journal"], j["log_bytes"])
PY
umount "$T/i"
echo "PASS"
