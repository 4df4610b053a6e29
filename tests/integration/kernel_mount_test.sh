#!/bin/bash
# The host kernel's ext4 mounts a filesystem whose external journal is on the
# nvjournal journal export: fs_mark with 10240-byte files under data=journal,
# then e2fsck clean on both devices. Then the same with file-backed exports
# and the server restarted between mounts: everything written before the
# restart is intact.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

echo "== memory-backed exports"
start_server mem data=1G journal=64M
attach mem "$T/mem.sock"
mke2fs -q -F -O journal_dev -b 4096 "$JOURNAL_DEV"
mke2fs -q -F -t ext4 -b 4096 -J "device=$JOURNAL_DEV" "$DATA_DEV"
mount_fs "$T/mnt"
fs_mark -d "$T/mnt/fs_mark" -s 10240 -n 1000 -t 2 -S 1 -k -l "$T/fs_mark.log" | tee "$T/fs_mark.out"
files=$(find "$T/mnt/fs_mark" -type f | wc -l)
[ "$files" = 2000 ] || { echo "expected 2000 files, found $files"; exit 1; }
umount "$T/mnt"
fsck_clean
detach mem
stop_server "$SERVER_PID"

echo "== file-backed exports, server restarted between mounts"
start_server file1 data=512M journal=32M "data-file=$T/data.img" "journal-file=$T/journal.img"
attach file1 "$T/file1.sock"
mke2fs -q -F -O journal_dev -b 4096 "$JOURNAL_DEV"
mke2fs -q -F -t ext4 -b 4096 -J "device=$JOURNAL_DEV" "$DATA_DEV"
mount_fs "$T/mnt"
fs_mark -d "$T/mnt/fs_mark" -s 10240 -n 500 -t 2 -S 1 -k -l "$T/fs_mark.log" >/dev/null
mkdir "$T/mnt/tree"
for i in $(seq 1 50); do head -c $((i * 3001)) /dev/urandom >"$T/mnt/tree/file$i"; done
ln -s file1 "$T/mnt/tree/link"
(cd "$T/mnt" && find tree fs_mark -type f -print0 | sort -z | xargs -0 sha256sum) >"$T/sums"
umount "$T/mnt"
detach file1
stop_server "$SERVER_PID"

# No sizes this time: the files' own are served, nothing is reformatted.
start_server file2 "data-file=$T/data.img" "journal-file=$T/journal.img"
attach file2 "$T/file2.sock"
fsck_clean
mount_fs "$T/mnt2"
(cd "$T/mnt2" && sha256sum --quiet -c "$T/sums")
[ "$(readlink "$T/mnt2/tree/link")" = file1 ]
[ "$(wc -l <"$T/sums")" = 1050 ]
fs_mark -d "$T/mnt2/more" -s 10240 -n 200 -t 2 -S 1 -k -l "$T/fs_mark.log" >/dev/null
umount "$T/mnt2"
fsck_clean
detach file2
stop_server "$SERVER_PID"
echo "PASS"
