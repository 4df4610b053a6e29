#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dm-log-writes logs in and out of the crash lab, with a real third-party
# writer: QEMU's blklogwrites driver (qemu-nbd, from qemu-utils).
#  1. The same workload (files written, renamed into directories, fsynced)
#     on the same ext4 image, once through qemu-nbd logging with
#     blklogwrites, once through nvjournal recording; both attached with
#     nvj attach, mounted by this host's kernel. nvj crash import turns the
#     QEMU log into a recording; nvj crash check gives both the same
#     verdict: none failing with the kernel's barriers, some failing (the
#     kernel's e2fsck confirms) with nobarrier, exit status 1.
#  2. nvj crash export writes nvjournal's recording as a dm-log-writes log;
#     importing it gives the same crash states back (the same counts, a
#     subset of the original's: a log holds a write only once it completed),
#     and exporting that again gives the very same log.
#  3. Bad input: a log with a bad magic, cut in an entry, writing past the
#     device (--size), a data length on a write: exit 1, naming the entry;
#     usage errors exit 2; nothing is left behind (no recording).
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v qemu-nbd >/dev/null || skip "qemu-nbd is not installed (qemu-utils)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 is not installed"
qemu-nbd --help 2>&1 | grep -q -- --image-opts || skip "qemu-nbd has no --image-opts"

truncate -s 128M "$T/base.img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$T/base.img"

# workload DIR: 24 files written, each renamed into one of 4 directories
# and fsynced there (with its directory).
workload() {
  local i d
  for i in $(seq 24); do
    d=$1/d$((i % 4))
    mkdir -p "$d"
    head -c $((i * 1500)) /dev/urandom >"$1/new"
    mv "$1/new" "$d/f$i"
    sync "$d/f$i" "$d"
  done
}

# run_on SERVER OPTIONS: attach the server's export, mount its ext4 with
# OPTIONS, run the workload, unmount, detach.
run_on() {
  attach "$1" "$T/$1.sock" --export data
  mkdir -p "$T/mnt"
  mount -t ext4 -o "$2" "$DATA_DEV" "$T/mnt"
  _mounts+=("$T/mnt")
  workload "$T/mnt"
  umount "$T/mnt"
  detach "$1" || fail "detach $1"
}

# qemu_log NAME OPTIONS: the workload through qemu-nbd with blklogwrites
# on a copy of the base image; leaves $T/NAME.log.
qemu_log() {
  cp --sparse=always "$T/base.img" "$T/$1.img"
  : >"$T/$1.log"
  qemu-nbd --image-opts --persistent -x data -k "$T/$1.sock" --pid-file "$T/$1.qpid" \
    "driver=blklogwrites,file.driver=file,file.filename=$T/$1.img,log.driver=file,log.filename=$T/$1.log" \
    >"$T/$1.qlog" 2>&1 &
  local pid=$! i
  _servers+=("$pid")
  for i in $(seq 100); do [ -S "$T/$1.sock" ] && break; sleep 0.1; done
  [ -S "$T/$1.sock" ] || { cat "$T/$1.qlog"; fail "qemu-nbd did not start"; }
  run_on "$1" "$2"
  kill "$pid"
  wait "$pid" || true
}

# nvj_record NAME OPTIONS: the workload through nvjournal on a copy of the
# base image, recorded; leaves $T/NAME.nvjrec.
nvj_record() {
  cp --sparse=always "$T/base.img" "$T/$1.img"
  start_server "$1" data-file="$T/$1.img" journal=4M fs=none record="$T/$1.nvjrec"
  run_on "$1" "$2"
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
}

# verdict RECORDING NAME VERIFY: nvj crash check's exit status and failing
# count, in VRC and VFAILING. A crash point after every 4th change (with
# nobarrier there is no flush to cut at until the end), at most 300 states,
# the kernel checking those VERIFY says (it alone sees some of what
# nobarrier breaks: e2fsck's reference counts).
verdict() {
  VRC=0
  "$NVJ" crash check "$1" --every 4 --max-states 300 --verify "$3" --out "$T/$2.check" \
    >"$T/$2.out" 2>&1 || VRC=$?
  [ "$VRC" -le 1 ] || { cat "$T/$2.out"; fail "nvj crash check $2 exited $VRC"; }
  VFAILING=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['verdicts']['failing'])" \
    "$T/$2.check/results.json")
  echo "$2: exit $VRC; $(tail -1 "$T/$2.out")"
}

echo "== 1. the same workload logged by QEMU's blklogwrites and recorded by nvjournal"
for mode in barrier nobarrier; do
  opts=$([ $mode = barrier ] && echo data=ordered || echo data=ordered,nobarrier)
  qemu_log "q$mode" "$opts"
  nvj_record "n$mode" "$opts"
  "$NVJ" crash import "$T/q$mode.log" --base "$T/base.img" --out "$T/q$mode.import" | tee "$T/q$mode.import.out"
  grep -Eq '^data: .* [1-9][0-9]* writes' "$T/q$mode.import.out" || fail "the $mode log holds no writes"
  verify=$([ $mode = barrier ] && echo sample || echo all)
  verdict "$T/q$mode.import/recording.nvjrec" "q$mode" "$verify"
  qrc=$VRC qfail=$VFAILING
  verdict "$T/n$mode.nvjrec" "n$mode" "$verify"
  nrc=$VRC nfail=$VFAILING
  if [ $mode = barrier ]; then
    [ "$qrc $qfail" = "0 0" ] || fail "the QEMU log with barriers: exit $qrc, $qfail failing (expected none)"
    [ "$nrc $nfail" = "0 0" ] || fail "nvjournal's recording with barriers: exit $nrc, $nfail failing (expected none)"
  else
    [ "$qrc" = 1 ] && [ "$qfail" -gt 0 ] || fail "the QEMU log with nobarrier: exit $qrc, $qfail failing (expected some)"
    [ "$nrc" = 1 ] && [ "$nfail" -gt 0 ] || fail "nvjournal's recording with nobarrier: exit $nrc, $nfail failing (expected some)"
    grep -q "ground truth (kernel mount, then e2fsck -fn)" "$T/q$mode.out" || fail "the kernel did not check the QEMU log's states"
  fi
done

echo "== 2. nvjournal's recording out as a dm-log-writes log and in again"
rec=$T/nbarrier.nvjrec
"$NVJ" crash export "$rec" --format dm-log-writes --export data --out "$T/rt.log"
"$NVJ" crash import "$T/rt.log" --out "$T/rt"
"$NVJ" crash export "$T/rt/recording.nvjrec" --format dm-log-writes --out "$T/rt2.log"
cmp "$T/rt.log" "$T/rt2.log" || fail "export, import, export: the two logs differ"
count() {  # count RECORDING KEY: from nvj crash states --json
  "$NVJ" crash states "$1" --every 4 --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$2'])"
}
before=$(count "$rec" unique) after=$(count "$T/rt/recording.nvjrec" unique)
echo "unique states: recording $before, through the log $after"
[ "$after" -gt 0 ] && [ "$after" -le "$before" ] || fail "through the log: $after unique states, the recording has $before"
[ "$(count "$rec" flushes)" = "$(count "$T/rt/recording.nvjrec" flushes)" ] || fail "the flushes differ through the log"

echo "== 3. bad input"
expect_error() {  # expect_error STATUS TEXT COMMAND...
  local want=$1 text=$2 rc=0
  shift 2
  "$@" >"$T/err.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/err.out"; fail "$*: exit $rc, expected $want"; }
  grep -qF -- "$text" "$T/err.out" || { cat "$T/err.out"; fail "$*: no '$text' in what it said"; }
}
good=$T/qbarrier.log
python3 - "$good" "$T" <<'PY'
import struct, sys
good, t = sys.argv[1], sys.argv[2]
b = bytearray(open(good, 'rb').read())
sector = struct.unpack_from('<I', b, 24)[0]
open(t + '/magic.log', 'wb').write(b'\0' * 8 + b[8:])
# Entry 0's header is at log sector 1: set its data length (a write has none).
d = bytearray(b); struct.pack_into('<Q', d, sector + 24, 5); open(t + '/datalen.log', 'wb').write(d)
# Cut inside entry 0's data (its header, then one byte).
open(t + '/cut.log', 'wb').write(b[:2 * sector + 1] if struct.unpack_from('<Q', b, sector + 8)[0] > 1 else b[:sector + 8])
PY
expect_error 1 "not a dm-log-writes log: the super block's magic is 0" "$NVJ" crash import "$T/magic.log" --out "$T/bad1"
expect_error 1 "entry 0 (log byte 512): data length 5" "$NVJ" crash import "$T/datalen.log" --out "$T/bad2"
expect_error 1 "entry 0 (log byte 512)" "$NVJ" crash import "$T/cut.log" --out "$T/bad3"
expect_error 1 "lie beyond the device's 2048 sectors" "$NVJ" crash import "$good" --size 1M --out "$T/bad4"
for d in bad1 bad2 bad3 bad4; do [ ! -e "$T/$d/recording.nvjrec" ] || fail "$d: a recording was left"; done
expect_error 2 "--out DIR is required" "$NVJ" crash import "$good"
expect_error 2 "exclude each other" "$NVJ" crash import "$good" --out "$T/bad5" --start-mark a --no-start-mark
expect_error 2 "no mark 'nope'" "$NVJ" crash import "$good" --out "$T/bad6" --start-mark nope
expect_error 2 "--journal-size without --journal-log" "$NVJ" crash import "$good" --out "$T/bad7" --journal-size 1M
expect_error 2 "--journal-base without --journal-log" "$NVJ" crash import "$good" --out "$T/bad8" --journal-base "$T/base.img"
expect_error 2 "--sector-size 1000: a power of two" \
  "$NVJ" crash export "$rec" --format dm-log-writes --export data --sector-size 1000 --out "$T/x.log"
expect_error 2 "--format dm-log-writes is required" "$NVJ" crash export "$rec" --out "$T/x.log"
expect_error 2 "has no export 'nope'" "$NVJ" crash export "$rec" --format dm-log-writes --export nope --out "$T/x.log"
expect_error 1 "not on the log's sectors of 4096" \
  "$NVJ" crash export "$rec" --format dm-log-writes --export data --sector-size 4096 --out "$T/x.log"
[ ! -e "$T/x.log" ] && [ ! -e "$T/x.log.part" ] || fail "a refused export left a file"
# What is stored already is never overwritten.
expect_error 2 "exists; nothing is overwritten" "$NVJ" crash import "$good" --base "$T/base.img" --out "$T/qbarrier.import"
expect_error 2 "exists; nothing is overwritten" "$NVJ" crash export "$rec" --format dm-log-writes --export data --out "$T/rt.log"
cmp -s "$T/rt.log" "$T/rt2.log" || fail "a refused export changed the log it would have overwritten"
echo "PASS"
