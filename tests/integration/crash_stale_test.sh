#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The stale-data fact (fact nostale: each block of a file within its size
# holds zeroes or the file's own bytes, never another file's old data) by
# nvj crash run, the fast path and the kernel. Each workload fills the free
# space of a small ext4 with old data (a file to the last block, synced,
# removed, synced), writes a new 64 KiB file with buffered writes and posts
# the nostale fact of its blocks once write(2) has returned:
#   1. the control, the journal inside the data disk (fs-journal=internal),
#      the file fsynced: its blocks come from the old data's, and no crash
#      state shows it (the data reaches the disk before the commit that
#      gives the file its blocks, and that commit's flush covers both):
#      exit 0, no state fails, states after the nostale mark were checked;
#   2. the journal on the NVRAM export (the server's default), the data disk
#      a write cache that holds its writes until a flush, and no fsync:
#      the file's writeback started (sync_file_range WRITE), then a periodic
#      commit (commit=1). With dioread_nolock (ext4's default) the blocks are
#      allocated unwritten and converted once the data write is acknowledged;
#      the conversion's commit is durable on the journal device while the
#      data write is still in the data disk's volatile cache, and no flush
#      of the data disk comes in between (jbd2 flushes the filesystem's
#      device before a commit only for t_need_data_flush). Every kernel
#      measured up to 7.3 loses so (docs/findings/F2-rename-dir-fsync.md,
#      the stale-data mechanism; the issue F4): exit 1, failing states whose
#      violation is "stale" in f alone, the kernel's mount agreeing on each
#      it checked, each minimized to dropped writes of the data disk's data
#      alone. A kernel that passes here has fixed it: news for the findings
#      page, not a test to loosen;
#   3. the same with nodioread_nolock, F4's control: the blocks are
#      allocated written and filed as ordered data, whose writeback the
#      commit waits for and flushes: exit 0;
#   4. the planted fault, nobarrier, the file fsynced with the journal
#      inside: the commit can be durable while the data write is still in
#      the disk's cache: exit 1, failing states whose violation is "stale"
#      (among others: without barriers the metadata breaks too), the
#      kernel's mount agreeing on each it checked.
# Case 2 was case 1 with the journal outside, until a run here showed 13 of
# 2,759 states failing: a commit of the conversion before the fsync's flush
# (the same loss, through an fsync under load).
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v xfs_io >/dev/null || skip "xfs_io is not installed (xfsprogs): the workload starts writeback with it"

head -c 65536 /dev/urandom >"$T/new.bin"
# The fact's unit is the filesystem's block (stat -f), what it writes alone:
# the blocks' CRC-32Cs for each block size ext4 may pick.
for unit in 1024 2048 4096; do crc32c "$T/new.bin" "$unit" >"$T/blocks.$unit"; done
# workload NAME DURABLE...: $T/NAME.sh, the old data freed, f written and
# its fact posted, then the commands DURABLE (one a line).
workload() {
  local name=$1; shift
  {
    cat <<EOS
#!/bin/sh
set -e
# The free space full of old data: a file of it to the last block (dd ends
# on ENOSPC), then removed, both made durable.
yes "nvjournal: the old data of a file since removed" | dd of=old bs=1M iflag=fullblock status=none 2>/dev/null || true
sync
rm old
sync
cp "$T/new.bin" f
unit=\$(stat -f -c %S .)
"\$NVJ" mark fact nostale f \$unit \$(cat "$T/blocks.\$unit")
EOS
    printf '%s\n' "$@"
  } >"$T/$name.sh"
  chmod +x "$T/$name.sh"
}
workload fsync "sync f"
# The writeback started, not waited for; then three periodic commits' time.
workload commit "xfs_io -c 'sync_range -w 0 65536' f" "sleep 3"

# passes NAME LOG RESULTS: exit 0, no failing state, states after the mark.
passes() {
  [ "$STATUS" = 0 ] || fail "$1: exit $STATUS, not 0"
  check_json crash-results "$3"
  python3 - "$1" "$3" <<'PY' || fail "$1: the nostale fact was not checked, or a state failed"
import json, sys
name, r = sys.argv[1], json.load(open(sys.argv[2]))
after = [s for s in r["states"] if (s["last_mark"] or "").startswith("fact nostale f ")]
assert len(after) >= 10, f"{len(after)} states after the nostale mark"
assert r["verdicts"]["failing"] == 0, r["verdicts"]
print(f"{name}: {len(after)} states after the nostale mark, none failing")
PY
}
# shows_stale NAME LOG RESULTS alone|among: exit 1, states show old data in
# f, the kernel agreeing on each it checked. alone: every failing state
# fails so and no other way, and each minimized cause drops writes to the
# data disk's file data only (the journal's commit durable); among: other
# failures may come with it (no barrier at all breaks metadata too).
shows_stale() {
  [ "$STATUS" = 1 ] || fail "$1: exit $STATUS, not 1 (exit 0: no state showed old data in f; on case 2, a kernel that no longer loses it, see this test's header)"
  check_json crash-results "$3"
  grep -Eq "^  fail: stale content: [0-9]+ states?( |$)" "$2" || fail "$1: no signature of stale content"
  python3 - "$1" "$3" "$4" <<'PY' || fail "$1: the stale data is not found as expected, or the kernel disagrees"
import json, sys
name, r, alone = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3] == "alone"
failing = [s for s in r["states"] if s["verdict"] != "pass"]
stale = [s for s in failing if any(v["what"] == "stale" and v["path"] == "f" for v in s.get("violations", []))]
assert stale, "no state with the old data in f"
judged = [s for s in stale if "ground_truth" in s]
assert judged, "the kernel checked none of them"
for s in judged:
    assert s["agree"] and any(v["what"] == "stale" for v in s["ground_truth"]["violations"]), s
causes = [s["cause"] for s in stale if "cause" in s]
if alone:
    for s in failing:
        assert s["verdict"] == "fail", (s["ordinal"], s["verdict"], s.get("error"))
        assert all(v["what"] == "stale" and v["path"] == "f" for v in s["violations"]), (s["ordinal"], s["violations"])
    assert causes, "no failing state was minimized"
    for c in causes:
        assert c["found"] and c["dropped"], c
        assert all(d["export"] == "data" and d["region"] == "data" for d in c["dropped"]), c["dropped"]
print(f"{name}: {len(stale)} states show old data in f (of {len(failing)} failing), the kernel agreeing on the "
      f"{len(judged)} it checked" + (f", {len(causes)} minimized to dropped file data alone" if alone else ""))
PY
}

# The samples of 5000 states cover every crash point; the data disk is
# small so that the old data is few writes.
echo "== 1. the control: the journal inside, fsync"
run_crash "$T/inside.log" run --out "$T/inside" --verify failing --max-states 5000 data=32M fs-journal=internal \
  -- "$T/fsync.sh"
passes "the journal inside" "$T/inside.log" "$T/inside/results.json"

echo "== 2. the journal on another device, a periodic commit of the conversion (F4)"
# The data disk a write cache that keeps what it takes until a flush (no
# timing model, so no destaging while idle, as nvj crash explore's): the
# hdd model writes its cache home while idle, and whether that comes before
# the periodic commit depends on the load (13 states of 5,000 failed on a
# quiet machine, 1 under the test suite's load). A drive may hold a write
# that long: only a flush promises it home.
cache_only=(data-model=none data-write-cache=write-back data-rotational=yes)
run_crash "$T/outside.log" run --out "$T/outside" --verify failing --max-states 5000 --mount-options commit=1 \
  data=32M "${cache_only[@]}" -- "$T/commit.sh"
shows_stale "the journal outside, commit=1" "$T/outside.log" "$T/outside/results.json" alone

echo "== 3. F4's control: the same with nodioread_nolock"
run_crash "$T/nodio.log" run --out "$T/nodio" --verify failing --max-states 5000 \
  --mount-options commit=1,nodioread_nolock data=32M "${cache_only[@]}" -- "$T/commit.sh"
passes "nodioread_nolock" "$T/nodio.log" "$T/nodio/results.json"

echo "== 4. the planted fault: nobarrier"
run_crash "$T/nobarrier.log" run --out "$T/nobarrier" --verify failing --max-states 5000 --mount-options nobarrier \
  data=32M fs-journal=internal -- "$T/fsync.sh"
shows_stale "nobarrier" "$T/nobarrier.log" "$T/nobarrier/results.json" among
