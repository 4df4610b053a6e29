#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A torn journal commit block, judged as each kernel judges it.
#
# An ext4 with 4 KiB blocks whose journal has wrapped (its log blocks hold
# old transactions), its internal journal on a disk that tears at 512 bytes
# (journal-model=hdd:atomic=512) and never flushes (nobarrier): a commit
# block can land in part, its first sector (the commit header) new, the rest
# what the journal held there before.
#   - by the rules of 6.1 and e2fsck 1.47 (--recovery-kernel 6.1.0) such a
#     state needs fsck: the transaction is corrupt, never pass, never a
#     broken fact; e2fsck -fy, an independent reading, says the same
#     transaction "was corrupt, replay was aborted";
#   - by this machine's kernel (6.11 and later take the block as complete)
#     the same states are not needs_fsck, and the kernel's own mount of
#     every state agrees with the fast path (verdicts and paths), the
#     needs_fsck states left (torn superblocks) included.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../support/wrapped_journal.sh"
require_kernel_lab

release=$(uname -r)
case "$release" in
  [0-5].* | 6.[0-9].* | 6.10.*) skip "this machine's kernel ($release) takes a partial commit block as corrupt too" ;;
esac

# The filesystem, its journal wrapped (the mount point registered, so that
# an interrupted run leaves no mount behind).
_mounts+=("$T/mnt")
wrapped_journal_image "$T/data.img" "$T/mnt" || fail "no ext4 with a wrapped journal (see above)"
_mounts=()

run_crash "$T/record.log" record --out "$T/rec" --mount-options nobarrier data= journal= data-file="$T/data.img" \
  fs-journal=internal data-model=hdd:atomic=512 journal-model=hdd:atomic=512 -- \
  "$NVJ" writers --tasks 2 --dirs 1 --chunks 3 --chunk-size 4K --fsync each w
[ "$STATUS" = 0 ] || fail "nvj crash record: exit $STATUS"
REC="$T/rec/recording.nvjrec"
STATES=(--keep 0 --torn 16)

status=0
"$NVJ" crash check "$REC" "${STATES[@]}" --mount-options nobarrier --verify none --recovery-kernel 6.1.0 --out "$T/old" >"$T/old.log" 2>&1 ||
  status=$?
[ "$status" = 1 ] || { cat "$T/old.log"; fail "by 6.1's rules: exit $status, not 1"; }
check_json crash-results "$T/old/results.json"
python3 - "$T/old/results.json" >"$T/corrupt" <<'PY' || fail "by 6.1's rules, no torn commit block needs fsck"
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["options"]["partial_commit_blocks"] is False, r["options"]
corrupt = []
for s in r["states"]:
    m = re.match(r"journal: transaction (\d+) is corrupt \(its commit block fails its checksum\)", s.get("error", ""))
    if not m:
        continue
    assert s["verdict"] == "needs_fsck" and not s.get("violations"), s
    assert s["strategy"] == "torn" and s["torn"]["kept_bytes"] % 512 == 0 and s["torn"]["kept_bytes"] < 4096, s
    corrupt.append((s["ordinal"], m.group(1)))
assert len(corrupt) >= 3, corrupt
for ordinal, tid in corrupt[:2] + corrupt[-1:]:
    print(ordinal, tid)
PY
while read -r ordinal tid; do
  rm -rf "$T/image"
  "$NVJ" crash image "$REC" "${STATES[@]}" --state "$ordinal" --out "$T/image" >/dev/null
  status=0
  e2fsck -fy "$T/image/data.img" >"$T/e2fsck.log" 2>&1 || status=$?
  grep -q "^Journal transaction $tid was corrupt, replay was aborted" "$T/e2fsck.log" ||
    { cat "$T/e2fsck.log"; fail "state $ordinal: e2fsck does not find transaction $tid corrupt (exit $status)"; }
done <"$T/corrupt"

status=0
"$NVJ" crash check "$REC" "${STATES[@]}" --mount-options nobarrier --verify all --out "$T/new" >"$T/new.log" 2>&1 || status=$?
[ "$status" = 0 ] || [ "$status" = 1 ] || { cat "$T/new.log"; fail "by this kernel's rules: exit $status"; }
python3 - "$T/new/results.json" "$T/corrupt" <<'PY' || fail "by this kernel's rules, the fast path and the kernel disagree"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["options"]["partial_commit_blocks"] is True, r["options"]
by = {s["ordinal"]: s for s in r["states"]}
for line in open(sys.argv[2]):
    s = by[int(line.split()[0])]
    assert s["verdict"] != "needs_fsck" and s["ground_truth"]["verdict"] != "needs_fsck", s
v = r["verdicts"]
assert v["ground_truth"] == v["checked"] > 200 and v["disagree"] == 0, v
assert v["needs_fsck"] > 0, v  # torn superblocks: the kernel refuses them too
print(f"{v['checked']} states, {v['needs_fsck']} needing fsck, the kernel agreeing on each")
PY
echo "PASS"
