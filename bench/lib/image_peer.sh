# SPDX-License-Identifier: BSD-3-Clause
# The crash lab's peer in the benchmarks: a crash state checked by copying
# its whole images (cp --sparse=always of both), then loop devices, a mount
# (the kernel replays the journal), every file read back, the unmount and
# e2fsck -fn: what a tool without nvjournal's fast path or its state
# building does for each state. A script sources it and sets:
#
#   peer_dir    a folder of its own (the copies go to peer_dir/work)
#   peer_mnt    the mount point (made here)
#   peer_times  the file each state's seconds are appended to
#
# and calls image_peer_cleanup on exit (it detaches what a failure left).
peer_loops=()

image_peer_cleanup() {
  mountpoint -q "$peer_mnt" 2>/dev/null && umount "$peer_mnt"
  local l
  for l in "${peer_loops[@]}"; do losetup -d "$l" 2>/dev/null; done
  peer_loops=()
}

# image_peer_state DIR: the state whose images (data.img, journal.img, as
# nvj crash image writes them) are in DIR, checked the peer's way and timed.
image_peer_state() {
  local start dl jl
  mkdir -p "$peer_dir/work" "$peer_mnt"
  start=$(date +%s.%N)
  cp --sparse=always "$1/data.img" "$peer_dir/work/data.img"
  cp --sparse=always "$1/journal.img" "$peer_dir/work/journal.img"
  dl=$(losetup -f --show "$peer_dir/work/data.img"); peer_loops=("$dl")
  jl=$(losetup -f --show "$peer_dir/work/journal.img"); peer_loops+=("$jl")
  mount -t ext4 -o "journal_path=$jl" "$dl" "$peer_mnt"
  find "$peer_mnt" -type f -exec cat {} + >/dev/null
  umount "$peer_mnt"
  e2fsck -fn -j "$jl" "$dl" >/dev/null 2>&1 || true
  losetup -d "$dl"; losetup -d "$jl"; peer_loops=()
  echo "$(date +%s.%N) - $start" | bc >>"$peer_times"
}
