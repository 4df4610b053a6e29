#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Crashes during recovery (nvj crash check --during-recovery, nvj crash
# explore --during-recovery), on this host's kernel:
#   - ext4: the explorer's seq-1 workloads 29 (write_append(A/foo)
#     fsync(A/foo)) and 30 (the same, fdatasync), checked side by side (each in a process of its
#     own), 4 passing states of each recovered again under a recording: each
#     recovery has crash states (a point after every write), all checked,
#     none failing, the recovery's own final state passing; explore.json and
#     results.json say so and are valid;
#   - the same recording checked by nvj crash check with the kernel checking
#     a sample of the recoveries' states: none failing, the kernel agreeing;
#   - the planted fault, nobarrier: jbd2 then replays the journal without
#     flushing the replayed blocks before it marks the journal empty (on the
#     journal's own device, durable at once), so a cut during recovery loses
#     what the journal held: exit 1, recoveries' states failing, the
#     kernel's mount agreeing on those it checked;
#   - XFS: a workload's states recovered again (log recovery), the kernel
#     checking each recovery state: none failing;
#   - bad input (--vm beside it, a number that is none): exit 2, naming it;
#     nothing left behind.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

run_explore "$T/ext4.log" --workload 29,30 --during-recovery 4 --out "$T/ext4"
[ "$STATUS" = 0 ] || fail "ext4: exit $STATUS, not 0"
grep -Eq '^\(during recovery: 8 states recovered, [0-9]+ crash states of their recoveries checked, 0 failing\)$' "$T/ext4.log" ||
  fail "ext4: no line for the recoveries: $(tail -n 3 "$T/ext4.log")"
check_json crash-explore "$T/ext4/explore.json"
check_json crash-results "$T/ext4/workloads/29/results.json"
python3 - "$T/ext4" <<'PY' || fail "ext4: the recoveries are not what they should be"
import json, os, sys
out = sys.argv[1]
r = json.load(open(f"{out}/explore.json"))
assert r["during_recovery"]["per_workload"] == 4 and r["during_recovery"]["recovered"] == 8, r["during_recovery"]
assert [w["ordinal"] for w in r["workloads"]] == [29, 30], [w["ordinal"] for w in r["workloads"]]
for w in r["workloads"]:
    assert w["during_recovery"]["failing"] == 0 and w["during_recovery"]["states"] == [], w["during_recovery"]
    n = w["ordinal"]
    d = json.load(open(f"{out}/workloads/{n}/results.json"))["during_recovery"]
    assert d["errors"] == 0 and len(d["states"]) == 4, d
    ordinals = [s["ordinal"] for s in d["states"]]
    assert ordinals == sorted(set(ordinals)), ordinals
    for s in d["states"]:
        assert s["final_state"] == "pass", s
        assert s["crash_points"] >= 2 and s["checked"] >= 2 and s["failing"] == 0, s
        assert os.path.getsize(f"{out}/workloads/{n}/{s['recording']}") > 0, s
    # Some recovery replays the journal: its states are more than the two ends.
    assert max(s["checked"] for s in d["states"]) >= 8, [s["checked"] for s in d["states"]]
    print(f"ext4 workload {n}:", [(s["ordinal"], s["crash_points"], s["checked"]) for s in d["states"]])
PY

recording="$T/ext4/workloads/29/recording.nvjrec"
run_crash "$T/check.log" check "$recording" --during-recovery 4 --verify sample --sample 4 --out "$T/check"
[ "$STATUS" = 0 ] || fail "check: exit $STATUS, not 0"
check_json crash-results "$T/check/results.json"
python3 - "$T/check/results.json" <<'PY' || fail "check: the kernel did not check the recoveries' states, or disagreed"
import json, sys
d = json.load(open(sys.argv[1]))["during_recovery"]
assert d["failing"] == 0 and d["disagree"] == 0, d
truth = sum(s["ground_truth"] for s in d["states"])
assert truth >= 4, f"the kernel checked {truth} of the recoveries' states"
print(f"check: {d['checked']} states of 4 recoveries, the kernel checked {truth}, agreeing")
PY

run_crash "$T/nobarrier.log" check "$recording" --during-recovery 4 --verify failing --mount-options nobarrier \
  --out "$T/nobarrier"
[ "$STATUS" = 1 ] || fail "nobarrier: exit $STATUS, not 1"
check_json crash-results "$T/nobarrier/results.json"
grep -Eq '^during recovery: 4 states recovered, [0-9]+ crash states of their recoveries checked, [1-9][0-9]* failing$' \
  "$T/nobarrier.log" || fail "nobarrier: no failing recovery states: $(grep '^during' "$T/nobarrier.log")"
python3 - "$T/nobarrier/results.json" <<'PY' || fail "nobarrier: the kernel does not confirm the failing recovery states"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdicts"]["failing"] == 0, r["verdicts"]  # the states themselves pass
d = r["during_recovery"]
assert d["failing"] > 0 and d["disagree"] == 0, d
failing = [s for s in d["states"] if s["failing"] > 0]
assert all(s["ground_truth_failing"] > 0 for s in failing), failing
print(f"nobarrier: {d['failing']} of {d['checked']} recovery states fail, in {len(failing)} of 4 recoveries")
PY

run_explore "$T/xfs.log" --fs xfs --workload 29 --during-recovery 2 --max-states 10 --out "$T/xfs"
[ "$STATUS" = 0 ] || fail "xfs: exit $STATUS, not 0"
check_json crash-explore "$T/xfs/explore.json"
python3 - "$T/xfs/workloads/29/results.json" <<'PY' || fail "xfs: the recoveries are not what they should be"
import json, sys
d = json.load(open(sys.argv[1]))["during_recovery"]
assert d["recovered"] == 2 and d["errors"] == 0 and d["failing"] == 0, d
assert all(s["checked"] >= 2 and s["final_state"] == "pass" for s in d["states"]), d["states"]
print("xfs:", [(s["ordinal"], s["crash_points"], s["checked"]) for s in d["states"]])
PY

# Bad input: exit 2, naming it.
STATUS=0
"$NVJ" crash explore --vm --during-recovery 2 --out "$T/vm" >"$T/bad.log" 2>&1 || STATUS=$?
[ "$STATUS" = 2 ] || fail "--vm --during-recovery: exit $STATUS, not 2"
grep -q -- "--during-recovery recovers the states with this host's kernel" "$T/bad.log" ||
  fail "--vm --during-recovery: the error does not say why: $(cat "$T/bad.log")"
[ ! -e "$T/vm" ] || fail "--vm --during-recovery made its --out"
STATUS=0
"$NVJ" crash check "$recording" --during-recovery many >"$T/bad.log" 2>&1 || STATUS=$?
[ "$STATUS" = 2 ] || fail "--during-recovery many: exit $STATUS, not 2"
grep -q -- "--during-recovery" "$T/bad.log" || fail "--during-recovery many: the error does not name it: $(cat "$T/bad.log")"
echo "PASS"
