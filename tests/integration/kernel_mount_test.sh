#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The host kernel's ext4 mounts the filesystem the server built, as it is:
# with its external journal on the nvjournal journal export (fs_mark with
# 10240-byte files under data=journal, then e2fsck clean on both devices);
# with an internal journal on the NVRAM model inside the data export; and
# with file-backed exports and the server restarted between mounts, which
# serves the filesystem back as it is, everything written before intact.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

echo "== memory-backed exports"
start_server mem data=1G journal=64M
attach mem "$T/mem.sock"
# As the server built it. (e2fsck would only note that the external journal's
# device number is not recorded yet: nobody knew it; the first mount does.)
dumpe2fs -h "$DATA_DEV" 2>/dev/null | grep -q "^Journal UUID: *$(dumpe2fs -h "$JOURNAL_DEV" 2>/dev/null | awk '/^Filesystem UUID/ {print $3}')"
dumpe2fs -h "$JOURNAL_DEV" 2>/dev/null |
  grep -q "^Journal users: *$(dumpe2fs -h "$DATA_DEV" 2>/dev/null | awk '/^Filesystem UUID/ {print $3}')$"
mount_fs "$T/mnt"
fs_mark -d "$T/mnt/fs_mark" -s 10240 -n 1000 -t 2 -S 1 -k -l "$T/fs_mark.log" | tee "$T/fs_mark.out"
files=$(find "$T/mnt/fs_mark" -type f | wc -l)
[ "$files" = 2000 ] || { echo "expected 2000 files, found $files"; exit 1; }
umount "$T/mnt"
fsck_clean
detach mem
stop_server "$SERVER_PID"

echo "== internal journal on the NVRAM model, 1 KiB blocks"
start_server internal data=256M fs-journal=internal:16M fs-block-size=1024 "control=$T/internal.ctl"
attach internal "$T/internal.sock"
[ -z "$JOURNAL_DEV" ] || { echo "an internal journal must leave no journal export"; exit 1; }
dumpe2fs -h "$DATA_DEV" 2>/dev/null | grep -q "^Total journal size: *16M$"
mount_fs "$T/mnt"
fs_mark -d "$T/mnt/fs_mark" -s 10240 -n 300 -t 2 -S 1 -k -l "$T/fs_mark.log" >/dev/null
umount "$T/mnt"
fsck_clean
# The journal region's writes are counted apart from the data disk's.
"$NVJ" stats --json "$T/internal.ctl" >"$T/internal.json"
check_json stats "$T/internal.json"
# By value: the NVRAM region took the journal's writes (more than fs_mark's
# 300 files), the rest of the disk the others.
cat >"$T/internal-region.schema.json" <<'EOF'
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "required": ["exports"],
  "properties": {"exports": {
    "required": ["data"],
    "properties": {"data": {
      "required": ["ops", "regions"],
      "properties": {
        "ops": {"properties": {"write": {"properties": {"count": {"minimum": 1}}}}},
        "regions": {
          "required": ["journal"],
          "properties": {"journal": {
            "properties": {
              "model": {"pattern": "^nvram"},
              "durability": {"const": "durable on acknowledgement"},
              "ops": {"properties": {"write": {"properties": {"count": {"minimum": 301}}}}}
            }
          }}
        }
      }
    }}
  }}
}
EOF
check_json "$T/internal-region.schema.json" "$T/internal.json"
detach internal
stop_server "$SERVER_PID"

echo "== file-backed exports, server restarted between mounts"
start_server file1 data=512M journal=32M "data-file=$T/data.img" "journal-file=$T/journal.img"
attach file1 "$T/file1.sock"
mount_fs "$T/mnt"
fs_mark -d "$T/mnt/fs_mark" -s 10240 -n 500 -t 2 -S 1 -k -l "$T/fs_mark.log" >/dev/null
mkdir "$T/mnt/tree"
for i in $(seq 1 50); do head -c $((i * 3001)) /dev/urandom >"$T/mnt/tree/file$i"; done
ln -s file1 "$T/mnt/tree/link"
(cd "$T/mnt" && find tree fs_mark -type f -print0 | sort -z | xargs -0 sha256sum) >"$T/sums"
umount "$T/mnt"
detach file1
stop_server "$SERVER_PID"

# No sizes this time: the files' own are served, the filesystem as it is.
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
