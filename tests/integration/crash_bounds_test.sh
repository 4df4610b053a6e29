#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The crash lab bounded, on every layout, stopped when told:
#   - ext4 with its journal inside the data export (fs-journal=internal:16M,
#     which drops the default journal=), and data=journal: nvj writers
#     --fsync each passes in every state, by the fast path and the kernel;
#   - a run whose states explode (nobarrier: no flush ever empties the
#     volatile window) with the defaults: a sample of 20000 states spread
#     over every crash point, the loss reported (exit 1), e2fsck on every
#     state's recovered structure (each metadata image once), the kernel
#     agreeing on every state it checked (among them states whose
#     superblock lost needs_recovery, whose journal the kernel wipes unread),
#     and what was not checked said, with how to check it;
#   - SIGTERM while the check runs: it stops at the next state, writes the
#     report of what it checked (stopped: interrupted), takes everything
#     down and exits 1; while the workload runs: the workload (its whole
#     process group) is stopped, everything taken down, exit 1;
#   - SIGKILL during the workload, and during the check: what the run left
#     (its mount, its exports, the ground truth's loop devices, its run
#     folder) is cleared by the next run, which says so;
#   - an ext4 with fast commits (mkfs.ext4 -O fast_commit, which the fast
#     path does not replay): refused by the fast path up front with one
#     message, every state checked by the kernel alone, whose verdicts are
#     the states' (no ground truth beside them to disagree with), none
#     unreadable; where the kernel's own recovery loses an fsynced append
#     (seen here with 4 tasks in 2 directories), the states fail on that
#     fact, and the exit status says so;
#   - bad input: --log internal without --fs xfs, a --time-limit that is no
#     time, --verify failing of the fast-commit recording: exit 2, naming
#     what is wrong.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs

writers=("$NVJ" writers --tasks 4 --dirs 2 --chunks 8 --fsync each w)

run_crash "$T/internal.log" run --out "$T/internal" --verify all fs-journal=internal:16M -- "${writers[@]}"
[ "$STATUS" = 0 ] || fail "nvj crash run fs-journal=internal:16M exited $STATUS"
grep -q "journal inside" "$T/internal.log" || fail "the journal is not inside the data export"
if grep -q "journal=32M" "$T/internal.log"; then fail "the default journal= was not dropped"; fi
check_json crash-results "$T/internal/results.json"
python3 - "$T/internal/results.json" <<'PY' || fail "the internal journal's states are not all checked and passing"
import json, sys
r = json.load(open(sys.argv[1]))
assert list(r["recording"]["atomic_units"]) == ["data"], "an export besides data"
assert r["verdicts"]["checked"] > 100 and r["verdicts"]["failing"] == 0 and r["verdicts"]["disagree"] == 0, r["verdicts"]
assert r["verdicts"]["ground_truth"] == r["verdicts"]["checked"]
PY

run_crash "$T/journal.log" run --out "$T/journal" --mount-options data=journal -- "${writers[@]}"
[ "$STATUS" = 0 ] || fail "nvj crash run with data=journal exited $STATUS"

# nobarrier: the defaults bound it and still report the loss.
explode=("$NVJ" writers --tasks 8 --dirs 4 --chunks 16 --fsync each w)
run_crash "$T/nobarrier.log" run --out "$T/nobarrier" --mount-options nobarrier -- "${explode[@]}"
[ "$STATUS" = 1 ] || fail "the nobarrier run exited $STATUS, not 1"
grep -q "^a sample of 20000 of the [0-9]* unique states, spread over every crash point and strategy (--max-states 20000)" \
  "$T/nobarrier.log" || fail "the sample is not announced"
grep -q "^not checked: [0-9]* unique states; every one: nvj crash check .*recording.nvjrec --max-states 0" "$T/nobarrier.log" ||
  fail "what was not checked is not said"
check_json crash-results "$T/nobarrier/results.json"
python3 - "$T/nobarrier/results.json" "$T/nobarrier.log" <<'PY' || fail "the nobarrier run's report is not what it should be"
import json, re, sys
r = json.load(open(sys.argv[1]))
c = r["coverage"]
assert c["sampled"] and c["taken"] == c["checked"] == 20000 and c["unique"] > 100000, c
assert c["not_checked"] == c["unique"] - 20000 and c["stopped"] is None and c["rounds"] == 7, c
assert c["points"]["checked"] == c["points"]["with_states"], c["points"]
assert r["verdicts"]["failing"] > 0, "the loss is not reported"
assert r["signatures"] and all(g["detailed"] <= 3 for g in r["signatures"]), r["signatures"]
detailed = [s for s in r["states"] if "kept_changes" in s]
assert detailed and all("ground_truth" in s for s in detailed), "the kernel did not verify the detailed states"
# The kernel and the fast path agree on every state the kernel checked,
# its structure included: e2fsck judged every state's recovered metadata.
disagree = [s for s in r["states"] if "agree" in s and not s["agree"]]
assert r["verdicts"]["disagree"] == len(disagree) == 0, disagree[:2]
assert r["options"]["structure"] == "every", r["options"]
line = re.search(r"^structure \(e2fsck -fn on each recovered metadata image\): (\d+) images for (\d+) states$",
                 open(sys.argv[2]).read(), re.M)
assert line, "no structure line in the output"
images, judged = int(line[1]), int(line[2])
structural = [s for s in r["states"] if s["verdict"] == "unreadable" and s.get("error", "").startswith("e2fsck -fn")]
mounted = sum(s["verdict"] in ("pass", "fail") for s in r["states"]) + len(structural)
assert 0 < images < 20000 and judged == mounted, (images, judged, mounted)
print(f"{images} recovered metadata images checked by e2fsck; {len(structural)} states with damage only e2fsck sees")
assert sum("ground_truth" in s for s in r["states"]) <= len(detailed) + 20000 // 64 + 1, "more kernel checks than the bounds"
print(f"{c['checked']} of {c['unique']} states, {r['verdicts']['failing']} failing in {len(r['signatures'])} signatures")
PY

# interrupt_run LOG MARK WAIT NVJ-ARGS...: nvj NVJ-ARGS in the background,
# output to LOG; once LOG holds MARK and WAIT more seconds have passed,
# SIGTERM, which must end it within 30 s. Sets PID and STATUS.
interrupt_run() {
  local log=$1 mark=$2 wait=$3
  shift 3
  "$NVJ" "$@" >"$log" 2>&1 &
  PID=$!
  _servers+=("$PID")
  for _ in $(seq 300); do grep -q -- "$mark" "$log" && break; sleep 0.1; done
  grep -q -- "$mark" "$log" || fail "no '$mark' before the SIGTERM: $(cat "$log")"
  sleep "$wait"
  kill -TERM "$PID"
  for _ in $(seq 300); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$PID" 2>/dev/null; then fail "30 s after SIGTERM, nvj $* still runs"; fi
  STATUS=0
  wait "$PID" || STATUS=$?
  _servers=()
  cat "$log"
}

# SIGTERM while the check runs: it stops, reports, takes everything down.
interrupt_run "$T/term.log" "checking the unique states" 3 \
  crash run --out "$T/term" --max-states 0 --verify all --mount-options nobarrier -- "${explode[@]}"
[ "$STATUS" = 1 ] || fail "the interrupted run exited $STATUS, not 1"
grep -q "^interrupted (SIGTERM): what was checked is above and in results.json" "$T/term.log" || fail "it does not say it was interrupted"
experiment_leftovers "$PID" crash || fail "the interrupted run left something behind"
python3 - "$T/term/results.json" <<'PY' || fail "the interrupted run's report does not say so"
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
assert c["stopped"] == "interrupted" and 0 < c["checked"] < c["taken"] and c["rounds"] < 7, c
PY

# SIGTERM while the workload runs: it is stopped and the lab taken down.
interrupt_run "$T/term2.log" "== running" 2 \
  crash run --out "$T/term2" -- "$NVJ" writers --tasks 8 --dirs 4 --chunks 100000 --fsync each w
[ "$STATUS" = 1 ] || fail "the run interrupted in its workload exited $STATUS, not 1"
grep -q "== interrupted: the workload was stopped" "$T/term2.log" || fail "it does not say the workload was stopped"
experiment_leftovers "$PID" crash || fail "the run interrupted in its workload left something behind"
if pgrep -f "writers --tasks 8 --dirs 4 --chunks 100000" >/dev/null; then fail "the workload still runs"; fi

# SIGKILL: during the workload, then during the check; the next run clears
# what each left.
killed_run() {  # killed_run WHEN LOG ARGS... : kill -9 nvj crash run once LOG says WHEN
  local when=$1 log=$2; shift 2
  "$NVJ" crash run "$@" >"$log" 2>&1 &
  local p=$!
  for _ in $(seq 300); do grep -q "$when" "$log" && break; sleep 0.1; done
  grep -q "$when" "$log" || fail "'$when' never came: $(cat "$log")"
  sleep 2
  kill -KILL "$p"
  wait "$p" 2>/dev/null || true
  KILLED=$p
}
killed_run "== running" "$T/kill1.log" --out "$T/kill1" -- "$NVJ" writers --tasks 8 --dirs 4 --chunks 100000 --fsync each w
[ -d "/run/nvjournal/crash-$KILLED" ] || fail "the killed run left no run folder to clear"
grep -q "/run/nvjournal/crash-$KILLED/mnt" /proc/self/mountinfo || fail "the killed run left no mount to clear"
first=$KILLED
killed_run "checking the unique states" "$T/kill2.log" --out "$T/kill2" --max-states 0 --verify all \
  --mount-options nobarrier -- "${explode[@]}"
losetup -a | grep -q "/nvj-crash-$KILLED-" || fail "the killed check left no loop device to clear"
second=$KILLED
# The second run cleared the first at its start; a third clears the second.
grep -q "cleared what a run that was killed left in /run/nvjournal/crash-$first (.*unmounted /run/nvjournal/crash-$first/mnt" \
  "$T/kill2.log" || fail "the run killed in its workload was not cleared by the next one: $(head -n 3 "$T/kill2.log")"
run_crash "$T/after.log" run --out "$T/after" fs-journal=internal:16M -- "$NVJ" writers --tasks 2 --dirs 1 --chunks 2 --fsync each w
[ "$STATUS" = 0 ] || fail "the run after the killed ones exited $STATUS"
grep -q "cleared what a run that was killed left in /run/nvjournal/crash-$second (.*detached /dev/loop" "$T/after.log" ||
  fail "the run killed in its check was not cleared"
experiment_leftovers "$first" crash || fail "the run killed in its workload left something after the clearing"
experiment_leftovers "$second" crash || fail "the run killed in its check left something after the clearing"

# Fast commits: the ext4 made here on blank exports, recorded from there.
rec="$T/fc.nvjrec"
start_server fc data=128M journal=16M data-model=hdd journal-model=nvram fs=none "control=$T/fc.ctl"
attach fc "$T/fc.sock" --export data
mkfs.ext4 -q -F -O fast_commit "$DATA_DEV" || skip "mkfs.ext4 does not make fast commits"
dumpe2fs -h "$DATA_DEV" 2>/dev/null | grep -q "fast_commit" || fail "the filesystem has no fast_commit"
blockdev --flushbufs "$DATA_DEV"
curl -sf -X POST --unix-socket "$T/fc.ctl" "http://lab/record/start?file=$rec" >/dev/null || fail "the recording did not start"
mkdir -p "$T/fcmnt"
mount -t ext4 "$DATA_DEV" "$T/fcmnt"
_mounts+=("$T/fcmnt")
(cd "$T/fcmnt" && NVJ_CONTROL="$T/fc.ctl" NVJ_MNT="$T/fcmnt" "$NVJ" writers --tasks 4 --dirs 2 --chunks 6 --fsync each w)
umount "$T/fcmnt"
detach fc
curl -sf -X POST --unix-socket "$T/fc.ctl" http://lab/record/stop >/dev/null
stop_server "$SERVER_PID"
status=0
"$NVJ" crash check "$rec" --out "$T/fc" >"$T/fc.log" 2>&1 || status=$?
cat "$T/fc.log"
[ "$status" -le 1 ] || fail "the fast-commit recording's check exited $status"
[ "$(grep -c "fast_commit (fast commits are not replayed)" "$T/fc.log")" = 1 ] || fail "not one message refusing the fast path"
grep -q "checking the unique states by the kernel" "$T/fc.log" || fail "the kernel does not check the fast-commit states"
check_json crash-results "$T/fc/results.json"
python3 - "$T/fc/results.json" "$status" <<'PY' || fail "the fast-commit states are not the kernel's"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["recording"]["filesystem"] == "ext4" and r["recording"]["checked_by"] == "kernel", r["recording"]
v = r["verdicts"]
assert v["checked"] > 20 and v["unreadable"] == 0 and v["disagree"] == 0 and v["ground_truth"] == 0, v
assert (v["failing"] > 0) == (sys.argv[2] == "1"), (v, sys.argv[2])
after = [s for s in r["states"] if (s["last_mark"] or "").startswith(("fact file w/", "fact prefix w/"))]
assert len(after) > 10, f"only {len(after)} states after the writers' facts"
for s in r["states"]:
    if s["verdict"] != "pass":  # the kernel's recovery leaves an fsynced file short, nothing else
        assert s["verdict"] == "fail" and all(x["how"] in ("short", "size") for x in s["violations"]), s
print(f"{v['checked']} states by the kernel, {v['failing']} failing")
PY
status=0
"$NVJ" crash check "$rec" --verify failing >"$T/e3" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "the fast path does not read this ext4" "$T/e3" || fail "--verify failing of fast commits: exit $status, $(cat "$T/e3")"

status=0
"$NVJ" crash run --log internal -- true >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q -- "--log internal is XFS's" "$T/e1" || fail "--log internal with ext4: exit $status, $(cat "$T/e1")"
status=0
"$NVJ" crash check "$T/internal/recording.nvjrec" --time-limit soon >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q -- "--time-limit=soon: 'soon' is not a time" "$T/e2" || fail "--time-limit soon: exit $status, $(cat "$T/e2")"
for bad in "--max-states=lots" "--max-findings=-1" "--per-signature=x"; do
  status=0
  "$NVJ" crash check "$T/internal/recording.nvjrec" "$bad" >"$T/e4" 2>&1 || status=$?
  [ "$status" = 2 ] || fail "$bad: exit $status, not 2"
  grep -q -- "$bad: expected a whole number" "$T/e4" || fail "$bad: not named: $(cat "$T/e4")"
done
echo "PASS"
