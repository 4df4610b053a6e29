# SPDX-License-Identifier: BSD-3-Clause
# wrapped_journal_image IMAGE MOUNTPOINT: IMAGE becomes a 64 MiB ext4 with
# 4 KiB blocks whose 4 MiB journal (1024 blocks) has wrapped: 400 fsyncs of
# a few blocks each through a loop mount at MOUNTPOINT, unmounted again
# (also when a step fails). Its log blocks hold old transactions under the
# new ones, so a commit block that lands in part shows what was there
# before. Returns 1, saying why on stderr, when a step fails or the journal
# did not wrap. Needs root. Sourced by the kernel tests and the benchmarks.
wrapped_journal_image() {
  local image=$1 mnt=$2 status=0 sequence
  truncate -s 64M "$image" && mkfs.ext4 -q -F -b 4096 -J size=4 "$image" && mkdir -p "$mnt" || return 1
  mount -o loop "$image" "$mnt" || return 1
  python3 - "$mnt" <<'PY' || status=1
import os, sys
for i in range(400):
    fd = os.open(os.path.join(sys.argv[1], f"f{i}"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"%d\n" % i)
    os.fsync(fd)
    os.close(fd)
PY
  umount "$mnt" || status=1
  [ "$status" = 0 ] || return 1
  sequence=$(dumpe2fs -h "$image" 2>/dev/null | sed -n 's/^Journal sequence: *//p')
  [ $((sequence)) -gt 300 ] || { echo "the journal of $image did not wrap: sequence $sequence" >&2; return 1; }
}
