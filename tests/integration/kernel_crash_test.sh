#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A power cut under a mounted ext4 whose journal is on the NVRAM export and
# whose data disk has a volatile cache: after the cut the filesystem is taken
# down as after a real one (unmount with I/O errors, detach, so no cache on
# this host remembers anything), the power comes back, the exports are
# attached afresh, the mount replays the journal, every fsynced file is
# intact and e2fsck is clean. Once per loss policy.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v curl >/dev/null || skip "curl is not installed"

post() { curl -sf -X POST --unix-socket "$T/$1.ctl" "http://lab$2"; }
get() { curl -sf --unix-socket "$T/$1.ctl" "http://lab$2"; }

# What a cut must report for the NVRAM journal: no write was volatile.
cat >"$T/nvram-cut.schema.json" <<'EOF'
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "required": ["exports"],
  "properties": {"exports": {"type": "object", "required": ["journal"], "properties": {"journal": {
    "type": "object",
    "required": ["durable", "volatile_kept", "volatile_lost"],
    "properties": {"durable": {"type": "integer", "minimum": 0}, "volatile_kept": {"const": 0},
                   "volatile_lost": {"const": 0}}}}}}
}
EOF

for policy in all random reorder; do
  echo "== policy=$policy"
  start_server "$policy" data=512M journal=32M "control=$T/$policy.ctl" data-model=hdd journal-model=nvram
  attach "$policy-1" "$T/$policy.sock"
  mke2fs -q -F -O journal_dev -b 4096 "$JOURNAL_DEV"
  mke2fs -q -F -t ext4 -b 4096 -J "device=$JOURNAL_DEV" "$DATA_DEV"
  mnt="$T/$policy.mnt"
  mkdir -p "$mnt"
  mount -t ext4 -o "journal_path=$JOURNAL_DEV" "$DATA_DEV" "$mnt"
  _mounts+=("$mnt")
  mkdir "$mnt/spool"
  sync "$mnt/spool"
  for i in $(seq 1 40); do
    head -c $((i * 997 + 11)) /dev/urandom >"$mnt/spool/f$i"
    sync "$mnt/spool/f$i"  # fsync: must survive
  done
  sync "$mnt/spool"
  (cd "$mnt" && sha256sum spool/f*) >"$T/$policy.sums"
  for i in $(seq 1 20); do head -c 5000 /dev/urandom >"$mnt/spool/unsynced$i"; done  # may be lost

  post "$policy" "/crash?policy=$policy&seed=7" | tee "$T/$policy.crash"
  echo
  check_json "$T/nvram-cut.schema.json" "$T/$policy.crash"
  get "$policy" /stats >"$T/$policy.stats.json"  # powered off
  check_json stats "$T/$policy.stats.json"
  timeout 120 umount "$mnt"  # the kernel gets EIO and gives up on the journal
  detach "$policy-1"
  post "$policy" /power-on

  attach "$policy-2" "$T/$policy.sock"
  dumpe2fs -h "$DATA_DEV" 2>/dev/null | grep -q needs_recovery  # the journal holds committed work
  mount -t ext4 -o "journal_path=$JOURNAL_DEV" "$DATA_DEV" "$mnt"
  (cd "$mnt" && sha256sum --quiet -c "$T/$policy.sums")
  umount "$mnt"
  get "$policy" /journal >"$T/$policy.journal.json"  # the replay and the unmount, decoded
  check_json journal "$T/$policy.journal.json"
  fsck_clean
  detach "$policy-2"
  stop_server "$SERVER_PID"
done
echo "PASS"
