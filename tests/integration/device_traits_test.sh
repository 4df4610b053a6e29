#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The devices look to the kernel like what they model, end to end:
#  1. Over NBD (nbdinfo): the hdd export rotates, has a write cache, no
#     trim, 512/4096 sectors; the NVRAM export is write-through (no flush,
#     no FUA offered); an ssd export trims; overrides change each.
#  2. nvj attach: the loop devices carry the same (queue/rotational,
#     write_cache, discard_max_bytes, logical_block_size) and the scheduler
#     a distribution gives (mq-deadline for the disk, none for the NVRAM);
#     --scheduler overrides it, with a scheduler this kernel build offers
#     (probed: bfq, else kyber, else mq-deadline); one it lacks is refused,
#     naming what it offers, and nothing is attached; btrfs made and mounted on the disk model
#     leaves its ssd mode off, on the ssd model turns it on (the control).
#     Detach removes the loop devices: their queue settings would outlive
#     them; a free device whose discard limit another user left at 0 is
#     given up for a fresh one.
#  3. ext4 with its journal on the NVRAM export: the journal receives no
#     flush while fsyncs flush the data disk; with journal-write-cache=
#     write-back (the control) it receives them again.
#  4. Bad input: a value a property does not take, a sector size that is no
#     power of two, out of range or not dividing the export, a journal
#     property without a journal export, an ext4 block below the sector:
#     nbdkit does not start and says which; an unknown scheduler or export
#     for --scheduler is a usage error (exit 2) that attaches nothing.
# The same inside nvj vm: device_traits_vm_test.sh.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems btrfs
command -v nbdinfo >/dev/null || skip "nbdinfo is not installed (libnbd-bin)"
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs is not installed (btrfs-progs)"
command -v curl >/dev/null || skip "curl is not installed"

# info SOCKET EXPORT KEY: nbdinfo's value of KEY for EXPORT.
info() { nbdinfo "nbd+unix:///$2?socket=$1" | awk -v k="$3:" '$1 == k { print $2 }'; }
# queue DEVICE FILE: the device's queue setting, the scheduler in use only.
queue() {
  local v
  v=$(cat "/sys/block/$(basename "$1")/queue/$2")
  if [ "$2" = scheduler ]; then v=$(sed -E 's/.*\[([^]]*)\].*/\1/' <<<"$v"); fi
  echo "$v"
}
expect() {  # expect WHAT GOT WANTED
  [ "$2" = "$3" ] || fail "$1: '$2', expected '$3'"
}
# flushes SOCKET EXPORT: flush requests the export has served (GET /stats).
flushes() {
  curl -sf --unix-socket "$1" http://lab/stats |
    python3 -c "import json, sys; print(json.load(sys.stdin)['exports']['$2']['ops']['flush']['count'])"
}

# can_schedule NAME: this kernel gives a loop device the I/O scheduler NAME
# (loading its module if it must: a kernel build may have it built in, as a
# module, or not at all). Probed on a scratch loop device, given back none.
truncate -s 1M "$T/probe.img"
can_schedule() {
  local dev queue status=1
  dev=$(losetup -f --show "$T/probe.img") || fail "no loop device to probe the I/O schedulers with"
  queue="/sys/block/$(basename "$dev")/queue/scheduler"
  if echo "$1" >"$queue" 2>/dev/null; then status=0; fi
  echo none >"$queue" 2>/dev/null || true
  losetup -d "$dev"
  return $status
}
offered=() lacking=()
for s in mq-deadline bfq kyber; do
  if can_schedule "$s"; then offered+=("$s"); else lacking+=("$s"); fi
done
echo "this kernel gives loop devices: none ${offered[*]}; not: ${lacking[*]:-(all offered)}"
[[ " ${offered[*]} " == *" mq-deadline "* ]] ||
  skip "this kernel build has no mq-deadline I/O scheduler, which nvj attach gives a rotational device"
# The override: a scheduler no export gets by default (the ssd model's is none).
override=mq-deadline
for s in bfq kyber; do
  if [[ " ${offered[*]} " == *" $s "* ]]; then override=$s; break; fi
done

echo "== 1. what the exports say over NBD"
start_server a data=256M journal=64M fs=none
expect "hdd is_rotational" "$(info "$T/a.sock" data is_rotational)" true
expect "hdd can_flush" "$(info "$T/a.sock" data can_flush)" true
expect "hdd can_fua" "$(info "$T/a.sock" data can_fua)" true
expect "hdd can_trim" "$(info "$T/a.sock" data can_trim)" false
expect "hdd minimum block" "$(info "$T/a.sock" data block_size_minimum)" 512
expect "hdd preferred block" "$(info "$T/a.sock" data block_size_preferred)" 4096
expect "nvram is_rotational" "$(info "$T/a.sock" journal is_rotational)" false
expect "nvram can_flush" "$(info "$T/a.sock" journal can_flush)" false
expect "nvram can_fua" "$(info "$T/a.sock" journal can_fua)" false
expect "nvram preferred block" "$(info "$T/a.sock" journal block_size_preferred)" 512
start_server b data=256M journal=64M fs=none data-model=ssd data-sector-size=4096 journal-rotational=yes \
  journal-write-cache=write-back journal-trim=yes
expect "ssd is_rotational" "$(info "$T/b.sock" data is_rotational)" false
expect "ssd can_trim" "$(info "$T/b.sock" data can_trim)" true
expect "data-sector-size=4096 minimum" "$(info "$T/b.sock" data block_size_minimum)" 4096
expect "journal-rotational=yes" "$(info "$T/b.sock" journal is_rotational)" true
expect "journal-write-cache=write-back" "$(info "$T/b.sock" journal can_flush)" true
expect "journal-trim=yes" "$(info "$T/b.sock" journal can_trim)" true
# A flush sent anyway to the write-through export: nbd_client_test.cpp.

echo "== 2. nvj attach: the loop devices say the same"
attach one "$T/a.sock" 2>"$T/attach.err"
cat "$T/attach.err"
expect "data rotational" "$(queue "$DATA_DEV" rotational)" 1
expect "data write_cache" "$(queue "$DATA_DEV" write_cache)" "write back"
expect "data discard_max_bytes" "$(queue "$DATA_DEV" discard_max_bytes)" 0
expect "data scheduler" "$(queue "$DATA_DEV" scheduler)" mq-deadline
expect "data logical_block_size" "$(queue "$DATA_DEV" logical_block_size)" 512
expect "journal rotational" "$(queue "$JOURNAL_DEV" rotational)" 0
expect "journal write_cache" "$(queue "$JOURNAL_DEV" write_cache)" "write through"
expect "journal scheduler" "$(queue "$JOURNAL_DEV" scheduler)" none
grep -q "data $DATA_DEV: rotational, write-back cache, no trim, sectors 512/4096, scheduler mq-deadline" \
  "$T/attach.err" || fail "nvj attach does not say what the data device got"
mkfs.btrfs -q -f "$DATA_DEV" >/dev/null
mkdir "$T/m"
mount "$DATA_DEV" "$T/m"
_mounts+=("$T/m")
options=$(awk -v m="$T/m" '$2 == m { print $4 }' /proc/mounts)
echo "btrfs on the disk model: $options"
! grep -qw ssd <<<"$options" || fail "btrfs on the hdd export mounted with ssd ($options)"
umount "$T/m"
loops=$(awk '{print $2}' "$T/one.devices")
detach one
for dev in $loops; do
  # Gone, or made anew, and perhaps bound already by another test running
  # beside this one: an unbound device with the scheduler nvj attach gave
  # it is the one left behind.
  sys="/sys/block/$(basename "$dev")"
  if [ -e "$sys" ] && [ ! -e "$sys/loop/backing_file" ] && [ "$(queue "$dev" scheduler)" = mq-deadline ]; then
    fail "$dev kept the mq-deadline scheduler after detach"
  fi
done
# A free loop device whose discard limit an earlier user left at 0 (one held
# open at its detach keeps it, and the kernel will not raise it again): nvj
# attach takes a fresh device instead, so the ssd export still trims. It is
# the lowest free one now, the one the kernel offers next (unless a test
# beside this one takes it first: then that test's attach gives it up).
truncate -s 16M "$T/stale.img"
stale=$(losetup -f --show "$T/stale.img")
echo 0 >"/sys/block/$(basename "$stale")/queue/discard_max_bytes"
losetup -d "$stale"
remove_stale() {  # the device, if no attach took and replaced it
  [ -e "/sys/block/$(basename "$stale")" ] && [ ! -e "/sys/block/$(basename "$stale")/loop/backing_file" ] || return 0
  python3 -c 'import fcntl, os, sys; fcntl.ioctl(os.open("/dev/loop-control", os.O_RDWR), 0x4C81, int(sys.argv[1]))' \
    "${stale#/dev/loop}" 2>/dev/null || true
}
# A scheduler this kernel lacks: nvj attach says so, naming what it offers,
# and leaves nothing attached.
for s in "${lacking[@]}"; do
  status=0
  "$NVJ" attach --state "$T/lacking.attach" --scheduler "data=$s" "$T/b.sock" 2>"$T/err" || status=$?
  cat "$T/err"
  [ "$status" != 0 ] || { "$NVJ" detach --state "$T/lacking.attach" || true; fail "--scheduler data=$s attached"; }
  grep -q "the kernel has no I/O scheduler '$s' for /dev/loop[0-9]* (it offers: .*none" "$T/err" ||
    fail "--scheduler data=$s: no error naming the scheduler and what the kernel offers"
  [ ! -e "$T/lacking.attach/attach.log" ] || fail "--scheduler data=$s left an attachment to undo"
done
attach two "$T/b.sock" --scheduler "data=$override"
remove_stale
expect "ssd rotational" "$(queue "$DATA_DEV" rotational)" 0
expect "--scheduler data=$override" "$(queue "$DATA_DEV" scheduler)" "$override"
expect "data-sector-size=4096 logical_block_size" "$(queue "$DATA_DEV" logical_block_size)" 4096
[ "$(queue "$DATA_DEV" discard_max_bytes)" != 0 ] || fail "the ssd export's device takes no discards"
expect "journal-rotational=yes scheduler" "$(queue "$JOURNAL_DEV" scheduler)" mq-deadline
mkfs.btrfs -q -f "$DATA_DEV" >/dev/null
mount "$DATA_DEV" "$T/m"
options=$(awk -v m="$T/m" '$2 == m { print $4 }' /proc/mounts)
echo "btrfs on the ssd model: $options"
grep -qw ssd <<<"$options" || fail "btrfs on the ssd export did not turn its ssd mode on ($options)"
umount "$T/m"
detach two

echo "== 3. ext4 with its journal on the NVRAM: no flush reaches the journal"
for cache in default write-back; do
  params=(data=256M journal=64M control="$T/$cache.ctl")
  [ "$cache" = default ] || params+=(journal-write-cache="$cache")
  start_server "j$cache" "${params[@]}"
  attach "j$cache" "$T/j$cache.sock"
  mkdir -p "$T/j$cache"
  mount -t ext4 -o "journal_path=$JOURNAL_DEV" "$DATA_DEV" "$T/j$cache"
  _mounts+=("$T/j$cache")
  for i in $(seq 1 20); do
    dd if=/dev/zero of="$T/j$cache/f$i" bs=4096 count=4 conv=fsync status=none
  done
  umount "$T/j$cache"
  fsck_clean || fail "e2fsck found the filesystem unclean"
  journal=$(flushes "$T/$cache.ctl" journal)
  data=$(flushes "$T/$cache.ctl" data)
  echo "journal-write-cache $cache: the journal served $journal flushes, the data disk $data"
  [ "$data" -ge 20 ] || fail "20 fsyncs flushed the data disk $data times"
  if [ "$cache" = default ]; then
    expect "flushes the NVRAM journal served" "$journal" 0
  else
    [ "$journal" -ge 20 ] || fail "with a write-back journal, 20 fsyncs flushed it $journal times"
  fi
  detach "j$cache"
done

echo "== 4. bad input"
refused() {  # refused MESSAGE PARAM...: nbdkit does not start, and says MESSAGE
  local message=$1; shift
  if nbdkit -U "$T/bad.sock" "$NVJ_PLUGIN" "$@" --run true >"$T/bad.log" 2>&1; then
    fail "nbdkit started with $*"
  fi
  grep -qF "$message" "$T/bad.log" || { cat "$T/bad.log"; fail "nbdkit with $* did not say '$message'"; }
}
refused "data-rotational=maybe: expected yes or no" data-rotational=maybe
refused "journal-write-cache=on: expected write-back or write-through" journal-write-cache=on
refused "data-sector-size=3000: the logical sector size 3000 is not a power of two" data-sector-size=3000
refused "data-sector-size=8192: the logical sector size 8192 is not within 512 to 4096 bytes" data-sector-size=8192
refused "the physical sector size 512 is smaller than the logical one, 4096" data-sector-size=4096/512
refused "data-sector-size=4096: the export's size, 1002 KiB, is not a whole number of 4096-byte logical sectors" \
  data=1002K fs=none data-sector-size=4096
refused "journal-trim=no: there is no journal export with fs-journal=internal" fs-journal=internal journal-trim=no
refused "fs-block-size=1024: is smaller than the 4096-byte logical sectors of data-sector-size=4096" \
  data-sector-size=4096 fs-block-size=1024
for bad in cfq nosuch=none; do
  status=0
  "$NVJ" attach --state "$T/bad.attach" --scheduler "$bad" "$T/a.sock" 2>"$T/err" || status=$?
  cat "$T/err"
  expect "exit status of --scheduler $bad" "$status" 2
  [ ! -e "$T/bad.attach/attach.log" ] || fail "--scheduler $bad attached something"
done

echo "PASS"
