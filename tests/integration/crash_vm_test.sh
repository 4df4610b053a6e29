#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj crash run --vm: the known bug, found. Debian 12's kernel in a QEMU
# guest, ext4 with its journal on the NVRAM export and its data on a disk
# with a write cache, data=ordered, and nvj-workload writers rewriting its
# files in place with an fsync after every chunk (the facts reach the host
# over the guest's serial line): crash states break the facts, and each of
# them dropped a write to the data disk that an fsync had returned after
# (its fsync trusted a data-disk flush the journal commit did not send):
# the minimized cause of each state described in full (the first 3 of each
# signature) is one or two acknowledged writes of the file's data on the
# data disk, and the kernel confirms that dropping just those breaks it.
# The ground truth (a kernel mount and e2fsck on the host) agrees on every
# failing state it checks (those described in full). The same workload with data=journal: no
# state fails; nor on XFS with its log on the NVRAM export (made from the
# host, the guest's kernel mounting it).
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip "no kernel in /boot (linux-image-amd64)"
busybox=$(command -v busybox) || skip "busybox is not installed (busybox-static)"

workload=(nvj-workload writers --tasks 4 --dirs 2 --chunks 4 --chunk-size 16K --rounds 2 --overwrite --fsync each w)

status=0
"$NVJ" crash run --vm --out "$T/ordered" --verify failing -- "${workload[@]}" >"$T/ordered.log" 2>&1 || status=$?
tail -n 30 "$T/ordered.log"
[ "$status" = 1 ] || fail "data=ordered in the guest: exit $status, not 1 (failing states)"
grep -Eq "boot 1: [1-9][0-9]* marks from the guest posted" "$T/ordered.log" || fail "no marks came from the guest"
check_json crash-results "$T/ordered/results.json"
python3 - "$T/ordered/results.json" <<'PY' || fail "the failing states are not the known bug's"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [s for s in r["states"] if s["verdict"] != "pass"]
assert bad, "no failing state"
for s in bad:
    assert s["verdict"] == "fail", s
    # after the writers' facts (the last one may be another file's rewrite)
    assert s["last_mark"].startswith(("fact prefix w/", "fact file w/", "fact rewrite w/")), s["last_mark"]
    for v in s["violations"]:
        assert v["path"].startswith("w/d") and v["how"] != "missing", v  # there, with old bytes
    if "kept_changes" not in s:
        continue
    # described in full (the first of each signature): what it dropped, the
    # kernel's verdict, the cause minimized
    dropped = [c for c in s["dropped_changes"] if c["export"] == "data" and c["kind"] == "write" and c["acknowledged"]]
    assert dropped, f"state {s['ordinal']} dropped no acknowledged data-disk write"
    assert s["ground_truth"]["verdict"] == "fail" and s["agree"], s
    k = s["cause"]  # a few acknowledged writes of file data on the data disk, confirmed by the kernel
    assert k["found"] and k["minimal"] and 1 <= len(k["dropped"]) <= 2, k
    assert all(d["export"] == "data" and d["region"] == "data" and d["acknowledged"] for d in k["dropped"]), k
    assert k["ground_truth"] == "fail", k
minimized = sum("cause" in s for s in bad)
assert minimized == sum(min(g["states"], 3) for g in r["signatures"]), minimized
print(f"{len(bad)} of {len(r['states'])} states lose fsynced rewrites; "
      f"{minimized} described in full (the first 3 of each signature), the kernel agreeing on each, "
      f"their causes minimized to acknowledged data-disk writes of the files")
PY

status=0
"$NVJ" crash run --vm --mount-options data=journal --out "$T/journal" --verify failing -- "${workload[@]}" \
  >"$T/journal.log" 2>&1 || status=$?
tail -n 3 "$T/journal.log"
[ "$status" = 0 ] || fail "data=journal in the guest: exit $status, not 0"
tail -n 1 "$T/journal.log" | grep -Eq '^[1-9][0-9]* states checked in .*, 0 failing$' || fail "data=journal: not every state passed"

# XFS, made on the exports from this host, its log on the NVRAM export, the
# same workload in the same kernel: it keeps what fsync made durable.
status=0
"$NVJ" crash run --vm --fs xfs --out "$T/xfs" -- "${workload[@]}" >"$T/xfs.log" 2>&1 || status=$?
tail -n 3 "$T/xfs.log"
[ "$status" = 0 ] || fail "XFS in the guest: exit $status, not 0"
grep -Eq "boot 1: [1-9][0-9]* marks from the guest posted" "$T/xfs.log" || fail "XFS: no marks came from the guest"
python3 - "$T/xfs/results.json" <<'PY' || fail "XFS in the guest: not what it says"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["recording"]["filesystem"] == "xfs", r["recording"]
after = [s for s in r["states"] if (s["last_mark"] or "").startswith(("fact prefix w/", "fact file w/"))]
assert len(after) >= 10 and r["verdicts"]["failing"] == 0, (len(after), r["verdicts"])
PY
echo "PASS"
