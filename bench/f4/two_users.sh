#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# F4 with two users, as `nvj crash run` runs it in the filesystem's root
# (the images beside docs/findings/F4-stale-data-external-journal.md were
# a failing state of one such run):
#   nvj crash run --mount-options commit=1 data=32M journal=8M data-model=none \
#       data-write-cache=write-back data-rotational=yes -- bench/f4/two_users.sh
# alice (uid 1001) fills the free space with a file in her mode-700
# directory and deletes it (both synced); bob (uid 1002) writes a 64 KiB
# file f with buffered writes; its nostale fact is posted; the kernel's
# background writeback writes f (dirty pages expire after 1 s) and the
# periodic commit (commit=1) commits its extent's conversion. Needs
# setpriv (util-linux) and nvj mark (NVJ, else nvj, on the PATH).
set -eu
marker="SECRET OF ALICE, DELETED: not for bob"
nvj=${NVJ:-nvj}
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
mkdir -p home/alice home/bob
chown 1001:1001 home/alice
chown 1002:1002 home/bob
chmod 700 home/alice home/bob
as 1001 sh -c "yes '$marker' | dd of=home/alice/secret bs=64k iflag=fullblock status=none 2>/dev/null" || true
sync
rm home/alice/secret
sync
head -c 65536 /dev/zero | tr '\0' B | as 1002 dd of=home/bob/f bs=64k iflag=fullblock status=none
unit=$(stat -f -c %S .)
case "$unit" in
  1024) crc=7e3d1862 ;;
  2048) crc=b5222298 ;;
  4096) crc=6fbd5802 ;;
  *) echo "two_users.sh: no CRC of f's blocks for a $unit-byte block" >&2; exit 2 ;;
esac
blocks=""
i=0
while [ "$i" -lt $((65536 / unit)) ]; do blocks="$blocks $crc"; i=$((i + 1)); done
# shellcheck disable=SC2086 # one word a block
"$nvj" mark fact nostale home/bob/f "$unit" $blocks
sleep 2
expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
interval=$(cat /proc/sys/vm/dirty_writeback_centisecs)
echo 100 >/proc/sys/vm/dirty_expire_centisecs
echo 50 >/proc/sys/vm/dirty_writeback_centisecs
sleep 6
echo "$expire" >/proc/sys/vm/dirty_expire_centisecs
echo "$interval" >/proc/sys/vm/dirty_writeback_centisecs
