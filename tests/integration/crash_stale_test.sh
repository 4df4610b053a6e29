#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The stale-data fact (fact nostale: each 4 KiB block of a file within its
# size holds zeroes or the file's own bytes, never another file's old data)
# by nvj crash run, the fast path and the kernel. The workload fills the
# free space of a small ext4 with old data (a file to the last block, synced,
# removed, synced), writes a new 64 KiB file, posts the nostale fact of its
# blocks once write(2) has returned and before the fsync, then fsyncs it:
#   - data=ordered as it is: the new file's blocks come from the old data's,
#     and no crash state shows it (its data reaches the disk before the
#     commit that gives the file its blocks): exit 0, no state fails, and
#     states after the nostale mark were checked;
#   - the planted fault, nobarrier: the commit can be durable while the data
#     write is still in the disk's cache, and states show the old bytes in
#     the file: exit 1, failing states whose violation is "stale", the
#     kernel's mount agreeing on each it checked.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

head -c 65536 /dev/urandom >"$T/new.bin"
# The fact's unit is the filesystem's block (stat -f), what it writes alone:
# the blocks' CRC-32Cs for each block size ext4 may pick.
for unit in 1024 2048 4096; do crc32c "$T/new.bin" "$unit" >"$T/blocks.$unit"; done
cat >"$T/stale.sh" <<EOF
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
sync f
EOF
chmod +x "$T/stale.sh"

# The sample of 5000 states covers every crash point; the data disk is small
# so that the old data is few writes.
run_crash "$T/ordered.log" run --out "$T/ordered" --verify failing --max-states 5000 data=32M -- "$T/stale.sh"
[ "$STATUS" = 0 ] || fail "data=ordered: exit $STATUS, not 0"
check_json crash-results "$T/ordered/results.json"
python3 - "$T/ordered/results.json" <<'PY' || fail "data=ordered: the nostale fact was not checked, or a state failed"
import json, sys
r = json.load(open(sys.argv[1]))
after = [s for s in r["states"] if (s["last_mark"] or "").startswith("fact nostale f ")]
assert len(after) >= 10, f"{len(after)} states after the nostale mark"
assert r["verdicts"]["failing"] == 0, r["verdicts"]
print(f"data=ordered: {len(after)} states after the nostale mark, none failing")
PY

run_crash "$T/nobarrier.log" run --out "$T/nobarrier" --verify failing --max-states 5000 --mount-options nobarrier \
  data=32M -- "$T/stale.sh"
[ "$STATUS" = 1 ] || fail "nobarrier: exit $STATUS, not 1"
check_json crash-results "$T/nobarrier/results.json"
grep -Eq "^  fail: stale content: [0-9]+ states" "$T/nobarrier.log" || fail "nobarrier: no signature of stale content"
python3 - "$T/nobarrier/results.json" <<'PY' || fail "nobarrier: the stale data is not found, or the kernel disagrees"
import json, sys
r = json.load(open(sys.argv[1]))
stale = [s for s in r["states"] if any(v["what"] == "stale" and v["path"] == "f" for v in s.get("violations", []))]
assert stale, "no state with the old data in f"
judged = [s for s in stale if "ground_truth" in s]
assert judged, "the kernel checked none of them"
for s in judged:
    assert s["agree"] and any(v["what"] == "stale" for v in s["ground_truth"]["violations"]), s
print(f"nobarrier: {len(stale)} states show old data in f, the kernel agreeing on the {len(judged)} it checked")
PY
