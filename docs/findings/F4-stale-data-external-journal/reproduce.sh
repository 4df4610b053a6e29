#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ext4 with its journal on another device: the commit that converts a
# file's unwritten extent to written reaches the journal device while the
# file's data may still be in the data device's volatile cache; nothing
# flushes the data device in between. A power cut then leaves the file
# with blocks that read what the disk held before: a deleted file's data.
# Stock tools only (util-linux, e2fsprogs, coreutils, grep); run as root.
#
#   reproduce.sh [live] [DATA_DEV JOURNAL_DEV]
#       Runs the sequence on this kernel and watches the two devices'
#       flush counters (/sys/block/DEV/stat): exit 1 when the data
#       device saw no flush between the file's data write and the commit
#       that makes its blocks readable (the window in which a power cut
#       shows the old data), 0 when it did. With no devices it makes two
#       loop devices on files in a scratch folder; DEV and DEV are wiped.
#   reproduce.sh images
#       Attaches the two images beside this script (data.img.xz,
#       journal.img.xz: the devices as a power cut inside that window left
#       them, made on 6.18.44) through loop devices, lets this kernel's
#       mount replay the journal, and looks in /home/bob/f for the deleted
#       file's data: exit 1 when it is there (on any kernel: the state is
#       already made), 0 when not.
# Exit 2: it could not run (not root, a tool missing, a device busy).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
marker="SECRET OF ALICE, DELETED: not for bob"
die() { echo "reproduce.sh: $*" >&2; verdict=none; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (losetup, mount)"
for tool in losetup mke2fs mount umount filefrag setpriv dd grep; do
  command -v "$tool" >/dev/null || die "$tool is missing"
done
mode=live
extra=${MOUNT_OPTIONS:+,$MOUNT_OPTIONS}  # MOUNT_OPTIONS=nodioread_nolock: the control
case "${1:-}" in
  live) shift ;;
  images) mode=images; shift ;;
  /dev/*) ;;
  "") ;;
  *) die "unknown mode '$1' (live or images)" ;;
esac

scratch=$(mktemp -d /tmp/f4-reproduce.XXXXXX)
mnt=$scratch/mnt
loops=""
saved_expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
saved_writeback=$(cat /proc/sys/vm/dirty_writeback_centisecs)
verdict=""
cleanup() {
  rc=$?
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  for l in $loops; do losetup -d "$l" 2>/dev/null || true; done
  echo "$saved_expire" >/proc/sys/vm/dirty_expire_centisecs
  echo "$saved_writeback" >/proc/sys/vm/dirty_writeback_centisecs
  rm -rf "$scratch"
  # A command that failed under set -e is no verdict: exit 2, not 1.
  if [ -z "$verdict" ] && [ "$rc" != 0 ]; then
    echo "reproduce.sh: stopped by an error (status $rc): no verdict" >&2
    exit 2
  fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM
mkdir "$mnt"
chmod 755 "$scratch" "$mnt"

attach() {  # attach FILE: the loop device in $loop, kept for the cleanup
  loop=$(losetup -f --show "$1")
  loops="$loops $loop"
}

if [ "$mode" = images ]; then
  command -v xz >/dev/null || die "xz is missing"
  for i in data journal; do
    [ -f "$here/$i.img.xz" ] || die "no $here/$i.img.xz"
    xz -dc "$here/$i.img.xz" >"$scratch/$i.img"
  done
  attach "$scratch/journal.img"; journal=$loop
  attach "$scratch/data.img"; data=$loop
  echo "mount -t ext4 -o journal_path=$journal $data  (the mount replays the journal)"
  mount -t ext4 -o "journal_path=$journal" "$data" "$mnt"
  f=$mnt/home/bob/f
  [ -f "$f" ] || die "the images hold no home/bob/f"
  ls -ln "$f"
  leaked=$(grep -c "$marker" "$f" || true)
  if [ "$leaked" -gt 0 ]; then
    echo "FAIL: bob's f (uid $(stat -c %u "$f")) holds $leaked lines of alice's deleted file:"
    grep -m 1 "$marker" "$f"
    verdict=fail
    exit 1
  fi
  echo "PASS: f holds none of the deleted file's data"
  verdict=pass
  exit 0
fi

if [ $# = 2 ]; then
  data=$1 journal=$2
  for d in "$data" "$journal"; do
    [ -b "$d" ] || die "$d is no block device"
    ! grep -q "^$d " /proc/mounts || die "$d is mounted"
  done
elif [ $# = 0 ]; then
  truncate -s 64M "$scratch/data.img"
  truncate -s 8M "$scratch/journal.img"
  attach "$scratch/data.img"; data=$loop
  attach "$scratch/journal.img"; journal=$loop
else
  die "give both devices, DATA_DEV JOURNAL_DEV, or none"
fi
stat_of() { cat "/sys/block/$(basename "$(readlink -f "$1")")/stat"; }
flushes() { stat_of "$1" | awk '{ print $16 }'; }
[ -n "$(flushes "$data")" ] || die "this kernel's /sys/block stat has no flush counter"
wc=/sys/block/$(basename "$(readlink -f "$data")")/queue/write_cache
[ "$(cat "$wc")" = "write back" ] || echo "note: $data's write cache is '$(cat "$wc")': its flushes may be no-ops"

echo "uname -r: $(uname -r)"
echo "mke2fs -O journal_dev $journal; mke2fs -t ext4 -J device=$journal $data  ($(mke2fs -V 2>&1 | head -n 1))"
mke2fs -q -F -O journal_dev "$journal"
mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 -J "device=$journal" "$data"
echo "mount -t ext4 -o journal_path=$journal,commit=1$extra $data $mnt"
mount -t ext4 -o "journal_path=$journal,commit=1$extra" "$data" "$mnt"
grep " $mnt " /proc/mounts
mkdir -p "$mnt/home/alice" "$mnt/home/bob"
chown 1001:1001 "$mnt/home/alice"
chown 1002:1002 "$mnt/home/bob"
chmod 700 "$mnt/home/alice" "$mnt/home/bob"
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }

echo "alice (uid 1001) fills the free space with a file, syncs, deletes it, syncs"
as 1001 sh -c "yes '$marker' | dd of=$mnt/home/alice/secret bs=64k iflag=fullblock status=none 2>/dev/null" || true
sync
rm "$mnt/home/alice/secret"
sync
echo "bob (uid 1002) writes f, 64 KiB, buffered; no fsync, no sync"
head -c 65536 /dev/zero | tr '\0' 'B' >"$scratch/bob.bin"
as 1002 dd if="$scratch/bob.bin" of="$mnt/home/bob/f" bs=64k status=none
sleep 2  # f's creation committed
before=$(flushes "$data")
echo "the kernel's background writeback writes f (dirty_expire_centisecs=100)"
echo 100 >/proc/sys/vm/dirty_expire_centisecs
echo 50 >/proc/sys/vm/dirty_writeback_centisecs
waited=0
while filefrag -v "$mnt/home/bob/f" | grep -Eq 'unwritten|delalloc|unknown_loc' ||
      ! filefrag -v "$mnt/home/bob/f" | grep -q 'last'; do
  sleep 0.2
  waited=$((waited + 1))
  [ "$waited" -lt 150 ] || die "f was not written back within 30 s"
done
echo "f's data is written and its extent converted (filefrag shows it written):"
filefrag -v "$mnt/home/bob/f" | sed -n '4,$p'
sleep 3  # three periodic commits: the conversion's commit is among them
after=$(flushes "$data")
echo "flushes of the data device $data from before f's writeback to after the conversion's commit: $((after - before))"
if [ "$after" = "$before" ]; then
  echo "FAIL: the commit that makes f's blocks written reached $journal while no flush reached $data"
  echo "after f's data write: a power cut now leaves f reading what its blocks held before (alice's deleted data)."
  verdict=fail
  exit 1
fi
echo "PASS: $data was flushed between f's data write and the end"
verdict=pass
exit 0
