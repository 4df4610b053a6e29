#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The crash lab beyond ext4, on this host: nvj crash record --fs xfs (XFS
# made on the attached exports, its log on the NVRAM export, recorded from
# just after mkfs) and nvj crash check of the recording, and nvj crash run
# --fs btrfs; every state is checked by the kernel (a mount, the facts read
# back, then xfs_repair -n or btrfs check --readonly).
#   - nvj writers --fsync each: its facts hold in every state, on both,
#     and on XFS with its log inside the data export (--log internal);
#   - a script that posts a file fact without the fsync, on XFS: states
#     fail on that file alone (the check can fail), exit 1;
#   - an overwrite in place said durable without the flush, on XFS, torn
#     states too: the cause of a state that drops it, minimized with the
#     kernel as the test, is that one write; of a torn one, the tear alone;
#   - bad input: a filesystem the lab does not make, a server parameter that builds ext4 under
#     --fs xfs, nvj crash record without --out, --verify failing of an XFS
#     recording: exit 2, naming what is wrong.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v mkfs.xfs >/dev/null && command -v xfs_repair >/dev/null || skip "xfsprogs is not installed"
command -v mkfs.btrfs >/dev/null || skip "btrfs-progs is not installed"
require_filesystems xfs btrfs

writers=("$NVJ" writers --tasks 6 --dirs 2 --chunks 4 --chunk-size 16K --fsync each w)

# summary LOG : fails unless LOG's last line is the check's summary with
# F failing (a number, or a pattern such as [1-9][0-9]*).
summary() {
  tail -n 1 "$1" | grep -Eq "^[1-9][0-9]* states checked in [0-9.]+ s \([0-9]+ states/s\), $2 failing$"
}

# all_pass RESULTS FS : RESULTS (valid) is FS's, and every state passed by
# the kernel alone, at least 10 of them after the writers' facts.
all_pass() {
  check_json crash-results "$1" || return 1  # (set -e does not hold in a function called before ||)
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["recording"]["filesystem"] == sys.argv[2], r["recording"]
states = r["states"]
after = [s for s in states if (s["last_mark"] or "").startswith(("fact prefix w/", "fact file w/"))]
assert len(after) >= 10, f"only {len(after)} states after the writers' facts"
assert all(s["verdict"] == "pass" and "ground_truth" not in s for s in states)
PY
}

run_crash "$T/xfs-record.log" record --fs xfs --out "$T/xfs" -- "${writers[@]}"
[ "$STATUS" = 0 ] || fail "nvj crash record --fs xfs exited $STATUS"
grep -q "making xfs on .* (log on " "$T/xfs-record.log" || fail "XFS was not made with its log on the journal export"
[ -s "$T/xfs/recording.nvjrec" ] || fail "no recording in --out"
[ ! -e "$T/xfs/results.json" ] || fail "nvj crash record checked"
status=0
"$NVJ" crash check "$T/xfs/recording.nvjrec" --out "$T/xfs" >"$T/xfs-check.log" 2>&1 || status=$?
cat "$T/xfs-check.log"
[ "$status" = 0 ] || fail "nvj crash check of the XFS recording exited $status"
summary "$T/xfs-check.log" 0 || fail "not every XFS state passed"
all_pass "$T/xfs/results.json" xfs || fail "the XFS check is not what it says"
grep -q "xfs_repair -n" "$T/xfs/table.md" || fail "the report does not say the kernel and xfs_repair checked"

cat >"$T/liar.sh" <<'EOF2'
#!/bin/sh
set -e
printf 'hello' >said-so
"$NVJ" mark fact file said-so size 5 crc32c 9a71bb4c
EOF2
chmod +x "$T/liar.sh"
export NVJ
run_crash "$T/liar.log" run --fs xfs --out "$T/liar" -- "$T/liar.sh"
[ "$STATUS" = 1 ] || fail "nvj crash run --fs xfs of a lying workload exited $STATUS, not 1"
grep -q "said-so: expected 5 bytes, crc32c 9a71bb4c, found" "$T/liar.log" || fail "the broken fact is not named"
summary "$T/liar.log" '[1-9][0-9]*' || fail "no failing XFS state counted"
python3 - "$T/liar/results.json" <<'PY' || fail "the XFS states failed on something else"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [s for s in r["states"] if s["verdict"] != "pass"]
assert bad and all(s["verdict"] == "fail" and [v["path"] for v in s["violations"]] == ["said-so"] for s in bad), bad[:3]
assert all(s["last_mark"] == "fact file said-so size 5 crc32c 9a71bb4c" for s in bad)
PY

# A cause minimized by the kernel alone: a file's blocks written and
# fsynced, then overwritten in place by one O_DIRECT write of 64 KiB (no
# metadata changes) and said durable without the flush.
head -c 65536 /dev/urandom >"$T/new.bin"
cat >"$T/overwrite.sh" <<EOF2
#!/bin/sh
set -e
dd if=/dev/zero of=f bs=65536 count=1 conv=fsync status=none
dd if="$T/new.bin" of=f bs=65536 count=1 oflag=direct conv=notrunc status=none
"\$NVJ" mark fact file f size 65536 crc32c $(crc32c "$T/new.bin")
EOF2
chmod +x "$T/overwrite.sh"
run_crash "$T/overwrite.log" run --fs xfs --torn 2 --per-signature 100 --out "$T/overwrite" -- "$T/overwrite.sh"
[ "$STATUS" = 1 ] || fail "an unflushed overwrite said durable, on XFS: exit $STATUS, not 1"
grep -q "causes are minimized with the kernel as the test" "$T/overwrite.log" || fail "the check does not say how causes are minimized"
python3 - "$T/overwrite/results.json" <<'PY' || fail "the kernel's minimized causes are not the overwrite"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [s for s in r["states"] if s["verdict"] != "pass"]
assert bad and all([v["path"] for v in s["violations"]] == ["f"] for s in bad), bad[:3]
dropped = [s for s in bad if s["strategy"] == "none"]
assert dropped, "the state that drops the overwrite is not among the failing ones"
for s in dropped:
    c = s["cause"]
    assert c["found"] and c["ground_truth"] == "fail" and c["checks"] >= 1, c
    assert [(d["export"], d["kind"], d["length"], d["region"]) for d in c["dropped"]] == [("data", "write", 65536, "other")], c
torn = [s for s in bad if s["strategy"] == "torn"]
assert torn, "no torn state fails"
for s in torn:
    c = s["cause"]
    assert c["found"] and not c["dropped"] and c["torn"] == "other" and c["ground_truth"] == "fail", c
print(f"{len(dropped)} states dropping the overwrite and {len(torn)} torn, each cause minimized by the kernel")
PY

run_crash "$T/xfs-internal.log" run --fs xfs --log internal --out "$T/xfs-internal" -- "${writers[@]}"
[ "$STATUS" = 0 ] || fail "nvj crash run --fs xfs --log internal exited $STATUS"
grep -q "making xfs on .* (log inside)" "$T/xfs-internal.log" || fail "XFS was not made with its log inside"
summary "$T/xfs-internal.log" 0 || fail "not every state of XFS with its log inside passed"
all_pass "$T/xfs-internal/results.json" xfs || fail "the check of XFS with its log inside is not what it says"

run_crash "$T/btrfs.log" run --fs btrfs --out "$T/btrfs" -- "${writers[@]}"
[ "$STATUS" = 0 ] || fail "nvj crash run --fs btrfs exited $STATUS"
summary "$T/btrfs.log" 0 || fail "not every btrfs state passed"
all_pass "$T/btrfs/results.json" btrfs || fail "the btrfs check is not what it says"

# expect_usage LOG PATTERN ARGS... : nvj ARGS exits 2 and says PATTERN.
expect_usage() {
  local log=$1 pattern=$2 status=0; shift 2
  "$NVJ" "$@" >"$log" 2>&1 || status=$?
  [ "$status" = 2 ] && grep -q -- "$pattern" "$log" || fail "nvj $*: exit $status, $(cat "$log")"
}
expect_usage "$T/e1" "--fs=zfs: expected ext4, xfs or btrfs" crash run --fs zfs -- true
expect_usage "$T/e2" "fs=ext4 with --fs xfs" crash run --fs xfs fs=ext4 -- true
expect_usage "$T/e3" "--out DIR is required" crash record -- true
expect_usage "$T/e4" "the fast path reads ext4 only" crash check "$T/xfs/recording.nvjrec" --verify failing
echo "PASS"
