#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The devices look to a guest's kernel like what they model (nvj vm): the
# hdd export's disk rotates (mq-deadline), has a write cache and no discard,
# the NVRAM's is write-through (none), and btrfs on the disk model leaves
# its ssd mode off; an ssd export's disk discards and has the 4096-byte
# sectors it was given. The host's side: device_traits_test.sh.
source "$(dirname "$0")/lib.sh"

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (qemu-system-x86)"
command -v nbdkit >/dev/null || skip "nbdkit is not installed"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip "no kernel in /boot (linux-image-amd64)"
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs is not installed (btrfs-progs)"
[ "$(id -u)" = 0 ] || skip "needs root (btrfs is made through a loop device on the host)"
busybox=$(command -v busybox) || skip "busybox is not installed (busybox-static)"
if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
  skip "$busybox is linked dynamically: the guest needs busybox-static"
fi

guest='for d in sda sdb; do q=/sys/block/$d/queue
  echo "$d $(cat $q/rotational) $(cat $q/write_cache | tr " " -) $(cat $q/discard_max_bytes) $(cat $q/logical_block_size) $(sed -E "s/.*\[([^]]*)\].*/\1/" $q/scheduler)"
done; awk "\$2 == \"/mnt\" { print \"mount\", \$3, \$4 }" /proc/mounts'
"$NVJ" vm --fs btrfs -- sh -c "$guest" >"$T/vm.out" 2>"$T/vm.err" || { cat "$T/vm.err"; fail "nvj vm failed"; }
cat "$T/vm.out"
grep -qx "sda 1 write-back 0 512 mq-deadline" "$T/vm.out" || fail "the guest's hdd disk is not a rotating disk with a cache"
grep -qx "sdb 0 write-through 0 512 none" "$T/vm.out" || fail "the guest's NVRAM disk is not write-through"
grep -q "^mount btrfs " "$T/vm.out" || fail "no btrfs at the guest's /mnt"
! grep "^mount btrfs " "$T/vm.out" | grep -qw ssd || fail "btrfs in the guest mounted the disk model with ssd"
"$NVJ" vm data-model=ssd data-sector-size=4096 -- sh -c "$guest" >"$T/vm2.out" 2>"$T/vm2.err" ||
  { cat "$T/vm2.err"; fail "nvj vm failed"; }
cat "$T/vm2.out"
grep -Eq "^sda 0 write-back [1-9][0-9]* 4096 none$" "$T/vm2.out" ||
  fail "the guest's ssd disk does not discard, or has not 4096-byte sectors"
echo "PASS"
