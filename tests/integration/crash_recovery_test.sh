#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Crashes during recovery (nvj crash check --during-recovery, nvj crash
# explore --during-recovery), on this host's kernel:
#   - ext4: the explorer's seq-1 workloads 29 (write_append(A/foo)
#     fsync(A/foo)) and 30 (the same, fdatasync), explored as two shards
#     merged by nvj crash merge, 4 passing states of each recovered again
#     under a recording: each recovery has crash states (a point after
#     every write), all checked, none failing, the recovery's own final
#     state passing; the merged explore.json counts both shards'
#     recoveries, and it and results.json are valid;
#   - the same recording checked by nvj crash check with the kernel checking
#     a sample of the recoveries' states: none failing, the kernel agreeing;
#   - the same check in two shards, every passing state recovered
#     (--during-recovery 0), merged: each passing state recovered once, the
#     recoveries' folders beside the merged results.json; N states in a
#     shard (spread over passing states it cannot see) exit 2;
#   - the planted fault, nobarrier: jbd2 then replays the journal without
#     flushing the replayed blocks before it marks the journal empty (on the
#     journal's own device, durable at once), so a cut during recovery loses
#     what the journal held: exit 1, recoveries' states failing, the
#     kernel's mount agreeing on those it checked;
#   - XFS: a workload's states recovered again (log recovery), the kernel
#     checking each recovery state: none failing;
#   - an explorer killed (SIGKILL) while a recovery is served and attached,
#     its check killed with it: the recovery's server and attach stay, and
#     --resume clears them (saying so) and ends the exploration;
#   - bad input (--vm beside it, a number that is none): exit 2, naming it;
#     nothing left behind.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs

run_explore "$T/ext4-0.log" --workload 29 --shard 0/2 --during-recovery 4 --out "$T/ext4-0"
[ "$STATUS" = 0 ] || fail "ext4, shard 0: exit $STATUS, not 0"
run_explore "$T/ext4-1.log" --workload 30 --shard 1/2 --during-recovery 4 --out "$T/ext4-1"
[ "$STATUS" = 0 ] || fail "ext4, shard 1: exit $STATUS, not 0"
grep -Eq '^\(during recovery: 4 states recovered, [0-9]+ crash states of their recoveries checked, 0 failing\)$' "$T/ext4-1.log" ||
  fail "ext4: no line for the recoveries: $(tail -n 3 "$T/ext4-1.log")"
"$NVJ" crash merge --out "$T/ext4" "$T/ext4-0" "$T/ext4-1" >"$T/ext4.log" 2>&1 || fail "ext4: the merge failed: $(cat "$T/ext4.log")"
grep -Eq '^\(during recovery: 8 states recovered, [0-9]+ crash states of their recoveries checked, 0 failing\)$' "$T/ext4.log" ||
  fail "ext4: the merge does not count both shards' recoveries: $(cat "$T/ext4.log")"
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
    # Some recovery replays the journal: it writes more than the recovery
    # of the first state (the base, nothing to replay). How many states a
    # replay makes depends on the recording (4 to 31 seen), so the test
    # holds only to the difference.
    points = {s["ordinal"]: s["crash_points"] for s in d["states"]}
    clean = points.get(0, min(points.values()))
    assert max(points.values()) > clean, points
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

# In shards, every passing state recovered: merged, each once. A sample
# of 10 states (a recovery each, about a second), all in the first block of
# 64 and so in shard 0: shard 1 has none, and is given to the merge first,
# so a merge that kept the first shard's recoveries would show none.
for i in 0 1; do
  run_crash "$T/shard-$i.log" check "$recording" --shard "$i/2" --max-states 10 --during-recovery 0 --verify none \
    --out "$T/shard-$i"
  [ "$STATUS" = 0 ] || fail "check, shard $i: exit $STATUS, not 0"
done
"$NVJ" crash merge --out "$T/merged" "$T/shard-1" "$T/shard-0" >"$T/merged.log" 2>&1 ||
  fail "the check's merge failed: $(cat "$T/merged.log")"
grep -Eq '^during recovery: [0-9]+ states recovered, [0-9]+ crash states of their recoveries checked, 0 failing$' "$T/merged.log" ||
  fail "the check's merge says nothing of the recoveries: $(cat "$T/merged.log")"
check_json crash-results "$T/merged/results.json"
python3 - "$T" <<'PY' || fail "the merged check does not hold each passing state's recovery once"
import json, os, sys
t = sys.argv[1]
merged = json.load(open(f"{t}/merged/results.json"))
passing = sorted(s["ordinal"] for s in merged["states"] if s["verdict"] == "pass")
d = merged["during_recovery"]
recovered = [s["ordinal"] for s in d["states"]]
assert recovered == passing, (recovered, passing)
shards = [json.load(open(f"{t}/shard-{i}/results.json"))["during_recovery"] for i in (0, 1)]
assert shards[1]["recovered"] == 0 and shards[0]["recovered"] > 0, [s["recovered"] for s in shards]
for key in ("recovered", "checked", "failing", "disagree", "errors"):
    assert d[key] == sum(s[key] for s in shards), (key, d[key], [s[key] for s in shards])
assert d["recovered"] == len(passing) and d["errors"] == 0 and d["failing"] == 0, d
for s in d["states"]:
    assert os.path.getsize(f"{t}/merged/{s['recording']}") > 0, s
print(f"sharded check: {len(passing)} passing states, each recovered once, {d['checked']} recovery states")
PY
STATUS=0
"$NVJ" crash check "$recording" --shard 0/2 --during-recovery 4 --out "$T/shard-n" >"$T/bad.log" 2>&1 || STATUS=$?
[ "$STATUS" = 2 ] || fail "--shard 0/2 --during-recovery 4: exit $STATUS, not 2"
grep -q -- "--during-recovery 4 in shard 0 of 2" "$T/bad.log" || fail "--shard --during-recovery 4: the error: $(cat "$T/bad.log")"
[ ! -e "$T/shard-n" ] || fail "--shard 0/2 --during-recovery 4 made its --out"

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

# Killed while a recovery is served and attached: the recovery's Testbed
# is RUN/recovery-PID-N/ inside the explorer's run folder, its exports
# attached (nbdfuse) on RUN/recovery-PID-N/attach/. Seen there, the
# explorer and its check (its child named nvj; never its servers and
# nbdfuse, which a stop would leave stopped after the kill) are stopped
# (SIGSTOP) while the attach is still there, then killed (SIGKILL; the
# check by its parent-death signal).
"$NVJ" crash explore --workload 29 --max-states 10 --during-recovery 0 --out "$T/killed" >"$T/killed.log" 2>&1 &
killed=$!
_servers+=("$killed")
attached=" /run/nvjournal/explore-$killed/recovery-[0-9]*-[0-9]*/attach/data "
caught=0
end=$((SECONDS + 60))
while [ "$SECONDS" -lt "$end" ] && kill -0 "$killed" 2>/dev/null; do
  grep -q "$attached" /proc/mounts || continue
  stopped=("$killed" $(pgrep -x -P "$killed" nvj || true))  # none: its check ended just now
  kill -STOP "${stopped[@]}" 2>/dev/null || true
  if grep -q "$attached" /proc/mounts; then caught=1; break; fi
  kill -CONT "${stopped[@]}" 2>/dev/null || true
done
[ "$caught" = 1 ] || fail "no recovery was attached within 60 s: $(tail -n 5 "$T/killed.log")"
kill -KILL "$killed"
wait "$killed" || true
_servers=()
run_explore "$T/after-kill.log" --resume "$T/killed"
[ "$STATUS" = 0 ] || fail "the resumed run after the kill: exit $STATUS, not 0"
grep -Eq "^nvj: cleared what a run that was killed left in /run/nvjournal/explore-$killed \(.*recovery-[0-9]+-[0-9]+: detached its exports" \
  "$T/after-kill.log" || fail "the resumed run does not say it cleared the recovery: $(grep '^nvj: cleared' "$T/after-kill.log")"
experiment_leftovers "$killed" explore || fail "the killed run's recovery is left behind"
grep -q "^1 workloads, [0-9]* states checked in" "$T/after-kill.log" || fail "the resumed run did not end: $(tail -n 3 "$T/after-kill.log")"

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
