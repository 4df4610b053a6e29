#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# nvj vm's guest init (/init of the initramfs, tools/nvj/vm/initramfs.cpp),
# embedded in nvj at build time (tools/nvj/CMakeLists.txt) and checked by
# the test "lint: guest init parses". Modules, the filesystem at /mnt, one
# step, markers: whole lines "nvj-vm:TOKEN:WORD REST" (kernel: a line of the
# kernel's log about the filesystem; begin STEP; end STATUS; fail WHAT;
# unmounted). A failure powers off at once: QEMU exits and the host reports
# the console.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
. /nvj/config
say() { echo "nvj-vm:$NVJ_TOKEN:$*"; }
fail() { say "fail $*"; poweroff -f; sleep 60; }

step=command
for word in $(cat /proc/cmdline); do
  case "$word" in nvj.step=*) step=${word#nvj.step=} ;; esac
done

while read -r module optional; do
  # No SCSI scan of the kernel's own (see scan_disk below); built in, it
  # takes scsi_mod.scan=none from the command line. nbd: as many devices
  # as disks. A soft dependency (optional) may refuse this processor.
  params=
  [ "$module" != scsi_mod.ko ] || params=scan=none
  [ "$module" != nbd.ko ] || params="nbds_max=$NVJ_DISKS"
  insmod "/lib/modules/$module" $params || [ "$optional" = optional ] || fail "insmod $module"
done < /nvj/modules

wait_disk() {
  tries=0
  while [ ! -b "$1" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 200 ] || fail "no disk $1 after 20 s (is the export there?)"
    sleep 0.1
  done
}
# The I/O scheduler a distribution gives a disk: mq-deadline when it
# rotates, none when it does not (the disk says which: qemu.h).
# A kernel may still be setting up the queue when the disk appears (7.3
# answers EBUSY while it switches): the write is tried again for up to 5 s,
# and one that already reads [WANT] is left alone.
pick_scheduler() {
  queue=/sys/block/${1#/dev/}/queue
  if [ "$(cat "$queue/rotational")" = 1 ]; then want=mq-deadline; else want=none; fi
  tries=0
  until grep -q "\[$want\]" "$queue/scheduler"; do
    tries=$((tries + 1))
    [ "$tries" -le 50 ] || fail "the guest kernel would not give $1 the $want scheduler in 5 s: $(cat "$queue/scheduler")"
    echo "$want" > "$queue/scheduler" 2>/dev/null || true
    sleep 0.1
  done
}
# The disks are SCSI targets 0 (data) and 1 (journal). The kernel names a
# SCSI disk when its probe runs, and probes run in no fixed order, so its
# own scan is off (scsi_mod.scan=none) and each target is scanned here once
# the one before it has its name: the data disk is always sda.
scan_disk() {
  for host in /sys/class/scsi_host/host*; do echo "0 $1 0" > "$host/scan"; done
}
# The nbd transport: the guest's network, on which QEMU forwards one
# address per export to the server's socket, and nothing else; then each
# export attached by the kernel's NBD client, as nvj attach does on a host
# (the command comes from the same code: /nvj/attach), its traits from the
# NBD handshake, its sector size from -b.
nbd_attach() {
  dev=$1
  shift
  out=$("$@" 2>&1) || fail "$* (the kernel's NBD client): $out"
  tries=0
  until [ "$(cat "/sys/block/${dev#/dev/}/size")" != 0 ]; do
    tries=$((tries + 1))
    [ "$tries" -le 200 ] || fail "$dev has no size 20 s after $*: $out"
    sleep 0.1
  done
}
# Then its queue as nvj attach sets it on a host: the rotation (which
# Debian 12's kernel does not take from the handshake), the write cache, no
# discards where the export takes none; each read back.
nbd_queue() {
  queue=/sys/block/${1#/dev/}/queue
  echo "$2" > "$queue/rotational" && echo "$3" > "$queue/write_cache" || fail "set $1's queue: $2, $3"
  [ "$4" = yes ] || echo 0 > "$queue/discard_max_bytes" || fail "set $1's discard_max_bytes to 0"
  [ "$(cat "$queue/rotational")" = "$2" ] && [ "$(cat "$queue/write_cache")" = "$3" ] ||
    fail "$1's queue says rotational $(cat "$queue/rotational"), $(cat "$queue/write_cache"), not $2, $3"
  [ "$4" = yes ] || [ "$(cat "$queue/discard_max_bytes")" = 0 ] || fail "$1 still takes discards"
}
if [ "$NVJ_TRANSPORT" = nbd ]; then
  ip link set lo up && ip link set eth0 up && ip addr add "$NVJ_GUEST_ADDRESS/24" dev eth0 ||
    fail "bring up eth0 with $NVJ_GUEST_ADDRESS: $(ip link 2>&1)"
  . /nvj/attach
  NVJ_DATA_DEV=/dev/nbd0 NVJ_JOURNAL_DEV=/dev/nbd1
  pick_scheduler /dev/nbd0
  if [ "$NVJ_DISKS" -gt 1 ]; then pick_scheduler /dev/nbd1; fi
else
  NVJ_DATA_DEV=/dev/sda NVJ_JOURNAL_DEV=/dev/sdb
  scan_disk 0
  wait_disk /dev/sda
  pick_scheduler /dev/sda
  if [ "$NVJ_DISKS" -gt 1 ]; then
    scan_disk 1
    wait_disk /dev/sdb
    pick_scheduler /dev/sdb
  fi
fi
[ "$NVJ_DISKS" -gt 1 ] || NVJ_JOURNAL_DEV=
options=$NVJ_MOUNT_OPTIONS
# The journal or log on the second disk: ext4's journal_path=, XFS's
# logdev=; btrfs has none.
if [ "$NVJ_JOURNAL" = yes ] && [ "$NVJ_FS" != btrfs ]; then
  case "$NVJ_FS" in
    xfs) options="${options:+$options,}logdev=$NVJ_JOURNAL_DEV" ;;
    *) options="${options:+$options,}journal_path=$NVJ_JOURNAL_DEV" ;;
  esac
fi
mount -t "$NVJ_FS" ${options:+-o "$options"} "$NVJ_DATA_DEV" /mnt ||
  fail "mount -t $NVJ_FS ${options:+-o $options} $NVJ_DATA_DEV /mnt"
# How the command mounts it again (nvj crash explore --vm's, between
# workloads), and on what.
export NVJ_FS NVJ_MOUNT_FLAGS="$options" NVJ_DATA_DEV NVJ_JOURNAL_DEV
# What the kernel said while mounting (journal recovery among it): the
# console is quiet, the log is not.
dmesg | grep -E 'EXT4-fs|JBD2|XFS|BTRFS' | while read -r line; do say "kernel $line"; done

# The host's root, read-only over virtio-9p, for the host's own programs:
# the filesystem under test at its /mnt, scratch on tmpfs.
if [ "$NVJ_HOST_ROOT" = yes ]; then
  mkdir -p /host
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 nvjroot /host || fail "mount -t 9p nvjroot /host (the host's root)"
  for d in proc sys dev tmp run mnt bin; do
    [ -d "/host/$d" ] || fail "the host's root has no /$d"
  done
  mount -t proc proc /host/proc && mount -t sysfs sysfs /host/sys && mount -t devtmpfs devtmpfs /host/dev ||
    fail "mount /proc, /sys and /dev in the host's root"
  mkdir -p /host/dev/pts /host/dev/shm
  mount -t devpts devpts /host/dev/pts
  mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm
  for d in tmp var/tmp; do [ -d "/host/$d" ] && mount -t tmpfs -o mode=1777 tmpfs "/host/$d"; done
  mount -t tmpfs -o mode=0755 tmpfs /host/run
  [ -d /host/root ] && mount -t tmpfs -o mode=0700 tmpfs /host/root
  mount --bind /mnt /host/mnt || fail "mount --bind /mnt /host/mnt"
  mkdir -p /host/tmp/nvj/bin && cp /nvj/* /host/tmp/nvj/ || fail "copy the steps to the host's /tmp"
  # nvj-workload as in the initramfs guest, first on PATH.
  [ -x /bin/nvj-workload ] && cp /bin/nvj-workload /host/tmp/nvj/bin/
fi

# The command's marks (nvj-workload's facts, any nvj mark) reach the host's
# server over the second serial line; paths in facts are from /mnt.
export NVJ_MNT=/mnt
if [ "$NVJ_FACTS" = yes ]; then export NVJ_CONTROL=/dev/ttyS1; fi
say "begin $step"
if [ "$NVJ_HOST_ROOT" = yes ]; then
  PATH=/tmp/nvj/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot /host /bin/sh -c "cd /mnt && exec /bin/sh /tmp/nvj/$step" </dev/null
else
  # In /mnt, but not this shell: a command may unmount it (nvj crash explore --vm).
  (cd /mnt && exec sh "/nvj/$step") </dev/null
fi
status=$?
say "end $status"

if [ "$step" = command ] && [ "$NVJ_CRASH" = yes ]; then
  # The host cuts the power now. Should it be gone, end after a while.
  sleep "$NVJ_CRASH_WAIT"
  poweroff -f
fi
cd /
# What the step left running would keep the filesystem busy.
kill -9 -1 2>/dev/null
sync
if [ "$NVJ_HOST_ROOT" = yes ]; then
  umount /host/mnt || { say "fail umount /host/mnt: $(umount /host/mnt 2>&1)"; poweroff -f; }
fi
tries=0
until umount /mnt 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -le 50 ] || { say "fail umount /mnt: $(umount /mnt 2>&1)"; poweroff -f; }
  sleep 0.1
done
say unmounted
poweroff -f
