# SPDX-License-Identifier: BSD-3-Clause
# F4's workload: sh -c "$(cat workload.sh)" workload PATH MARK..., in the
# filesystem's root, with busybox's tools alone (nvj crash run --vm's guest
# has no more) or any POSIX system's. A file of old data fills the free
# space and is deleted (both synced); a new 64 KiB file f is written with
# buffered writes and its nostale fact posted (MARK..., the command that
# posts a mark: nvj mark, or nvj-workload mark in a guest; each block of f
# within its size holds zeroes or f's own bytes, never the old data); the
# kernel's background writeback writes f (no flush, no commit asked for:
# dirty pages expire after 1 s); then PATH makes a commit carry f's
# unwritten-to-written conversion:
#   periodic     nothing: the periodic commit (mount with commit=1)
#   fsync-other  another file g written and fsynced
#   fsync-dir    f's directory fsynced
#   sync         sync(2)
# (with the last three, mount with commit=60: no periodic commit between)
set -eu
path=$1
shift
case "$path" in periodic|fsync-other|fsync-dir|sync) ;; *) echo "workload: no commit path '$path'" >&2; exit 2 ;; esac
yes "OLD DATA OF A DELETED FILE" | dd of=old bs=65536 2>/dev/null || true
sync
rm old
sync
mkdir d
head -c 65536 /dev/zero | tr '\0' B >d/f
unit=$(stat -f -c %S .)
case "$unit" in
  1024) crc=7e3d1862 ;;
  2048) crc=b5222298 ;;
  4096) crc=6fbd5802 ;;
  *) echo "workload: no CRC of f's blocks for a $unit-byte block" >&2; exit 2 ;;
esac
blocks=""
i=0
while [ "$i" -lt $((65536 / unit)) ]; do blocks="$blocks $crc"; i=$((i + 1)); done
"$@" fact nostale d/f "$unit" $blocks
expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
interval=$(cat /proc/sys/vm/dirty_writeback_centisecs)
echo 100 >/proc/sys/vm/dirty_expire_centisecs
echo 50 >/proc/sys/vm/dirty_writeback_centisecs
sleep 4
echo "$expire" >/proc/sys/vm/dirty_expire_centisecs
echo "$interval" >/proc/sys/vm/dirty_writeback_centisecs
case "$path" in
  periodic) sleep 3 ;;
  fsync-other) echo g >d/g && sync d/g ;;
  fsync-dir) sync d ;;
  sync) sync ;;
esac
