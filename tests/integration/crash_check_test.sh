#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The crash lab's check on a real recording: an ext4 the server built, its
# journal on the NVRAM export and its data disk with a write cache, mounted
# by this host's kernel (data=ordered), nvj writers --fsync each posting its
# facts, and a file whose fact is posted before it is written, with no
# fsync that would make it true (a workload that lies, on purpose). Every crash state is checked by
# the fast path, and a sample of 1200 spread over the whole run by the
# ground truth (a kernel mount, e2fsck -fn) too:
#   - the two agree on every state of the sample, and the ground truth's
#     mounts are detached: none of its loop devices is ever in this host's
#     mount table, where a mount namespace another process makes would copy
#     it (and keep the state mounted, mid-journal, after the unmount);
#   - the writers' facts hold in every state (this kernel keeps what fsync
#     made durable);
#   - the lie is caught: states after its mark fail on that file alone, by
#     both checks, and nvj crash check exits 1;
#   - two shards merged give the same results.json as one run, byte for
#     byte, each state checked once, the details (changes, minimized cause)
#     of the first 3 failing states of each signature only; nvj crash
#     states counts the same states;
#   - a budget smaller than the states takes a sample over every crash
#     point, with the verdicts the whole check gives, and the report says
#     how many were not checked and how to check them.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v curl >/dev/null || skip "curl is not installed"


rec="$T/run.nvjrec"
start_server s data=128M journal=16M data-model=hdd journal-model=nvram "control=$T/c.ctl" "record=$rec"
attach a "$T/s.sock"
mnt="$T/mnt"
mkdir -p "$mnt"
mount -t ext4 -o "journal_path=$JOURNAL_DEV" "$DATA_DEV" "$mnt"
_mounts+=("$mnt")
(cd "$mnt" && NVJ_CONTROL="$T/c.ctl" NVJ_MNT="$mnt" "$NVJ" writers --tasks 12 --chunks 8 --chunk-size 4K --dirs 2 \
  --rounds 2 --fsync each w)
# The lie: a fact about a file nothing made durable, posted before the file
# is even written (written after, a loaded machine's writeback and the next
# commit's flush can make it durable before the mark; this way the mark's
# own crash point lacks it whatever the timing).
head -c 20000 /dev/urandom >"$T/lie"
"$NVJ" mark --control "$T/c.ctl" fact file lie size 20000 crc32c "$(crc32c "$T/lie")"
cp "$T/lie" "$mnt/lie"
umount "$mnt"
detach a
curl -sf -X POST --unix-socket "$T/c.ctl" http://lab/record/stop >/dev/null
stop_server "$SERVER_PID"

# Watches the ground truth's loop devices (backed by files in --scratch)
# until killed: "bound" once it has seen them, "mounted" if one of them is
# ever a mount's source in this mount namespace.
watch_scratch_mounts() {
  trap 'exit 0' TERM
  local f dev
  while :; do
    for f in /sys/block/loop*/loop/backing_file; do
      [ -r "$f" ] || continue
      case "$(cat "$f" 2>/dev/null)" in
        "$T/scratch/"*)
          touch "$T/watch.bound"
          dev=/dev/$(basename "$(dirname "$(dirname "$f")")")
          if grep -q " $dev " /proc/self/mountinfo; then echo "$dev" >>"$T/watch.mounted"; fi ;;
      esac
    done
    sleep 0.02
  done
}
watch_scratch_mounts &
watcher=$!
_servers+=("$watcher")

# Every unique state by the fast path alone.
status=0
"$NVJ" crash check "$rec" --every 3 --max-states 0 --verify none --out "$T/all" >"$T/all.log" || status=$?
[ "$status" = 1 ] || fail "nvj crash check exited $status, not 1 (a state breaks a fact)"
check_json crash-results "$T/all/results.json"
tail -n 1 "$T/all.log" | grep -Eq '^[0-9]+ states checked in [0-9.]+ s \([0-9]+ states/s\), [1-9][0-9]* failing$' ||
  fail "the last line is not the summary: $(tail -n 1 "$T/all.log")"
python3 - "$T/all/results.json" <<'PY' || fail "the verdicts are not what this kernel and workload give"
import json, sys
r = json.load(open(sys.argv[1]))
states = r["states"]
assert len(states) == r["enumeration"]["unique"] == r["verdicts"]["checked"], "every unique state checked"
assert not r["coverage"]["sampled"] and r["coverage"]["not_checked"] == 0 and r["coverage"]["stopped"] is None
assert len(states) >= 2000, f"only {len(states)} states"
assert [s["ordinal"] for s in states] == list(range(len(states))), "in ordinal order, each once"
bad = [s for s in states if s["verdict"] != "pass"]
assert bad, "the lie is caught"
for s in bad:
    assert s["verdict"] == "fail", s
    assert [v["path"] for v in s["violations"]] == ["lie"], s["violations"]
    assert s["last_mark"].startswith("fact file lie "), s["last_mark"]
passed_after_lie = [s for s in states if s["verdict"] == "pass" and (s["last_mark"] or "").startswith("fact file lie")]
print(f"{len(states)} states, {len(bad)} fail on the lie alone, {len(passed_after_lie)} after it pass")
writers = sum(1 for s in states if (s["last_mark"] or "").startswith(("fact file w/", "fact prefix w/")))
assert writers > 100, f"only {writers} states after the writers' facts"
PY

# A sample of 1200 by the ground truth too, its loop devices watched.
status=0
"$NVJ" crash check "$rec" --every 3 --max-states 1200 --verify all --scratch "$T/scratch" --out "$T/truth" \
  >"$T/truth.log" || status=$?
kill "$watcher"
wait "$watcher" || true
[ -e "$T/watch.bound" ] || fail "the watcher never saw the ground truth's loop devices"
[ ! -e "$T/watch.mounted" ] || fail "the ground truth's state was in this host's mount table: $(sort -u "$T/watch.mounted")"
cat "$T/truth.log"
[ "$status" = 1 ] || fail "nvj crash check exited $status, not 1 (a sampled state breaks a fact)"
check_json crash-results "$T/truth/results.json"
python3 - "$T/truth/results.json" "$T/all/results.json" <<'PY' || fail "the ground truth and the fast path disagree"
import json, sys
r, whole = (json.load(open(f)) for f in sys.argv[1:])
states = r["states"]
c = r["coverage"]
assert c["sampled"] and c["checked"] == len(states) == 1200, c
assert all("ground_truth" in s for s in states), "the ground truth checked every sampled state"
disagree = [s for s in states if not s["agree"]]
assert not disagree, f"{len(disagree)} states where the fast path and the kernel disagree, as {disagree[0]}"
assert r["verdicts"]["disagree"] == 0 and r["verdicts"]["ground_truth"] == len(states)
verdict = {s["ordinal"]: s["verdict"] for s in whole["states"]}
assert all(verdict[s["ordinal"]] == s["verdict"] for s in states), "a sampled state's verdict differs from the whole check's"
bad = [s for s in states if s["verdict"] != "pass"]
assert bad, "the lie is in the sample"
assert all(s["ground_truth"]["verdict"] == "fail" for s in bad)
print(f"{len(states)} states checked by the kernel too, {len(bad)} failing, none disagreeing")
PY

# A failing state's images, by hand: e2fsck replays the journal, and the
# lie is not in the root directory; a passing state's holds the writers' tree.
bad=$(python3 -c 'import json,sys; print(next(s["ordinal"] for s in json.load(open(sys.argv[1]))["states"] if s["verdict"] != "pass"))' "$T/all/results.json")
"$NVJ" crash image "$rec" --every 3 --state "$bad" --out "$T/bad"
e2fsck -fy -E journal_only -j "$T/bad/journal.img" "$T/bad/data.img" >/dev/null 2>&1 || true
debugfs -R "ls -l /" "$T/bad/data.img" 2>/dev/null >"$T/bad.ls"
grep -q " w " "$T/bad.ls" || grep -qw "w" "$T/bad.ls" || fail "the failing state's root has no w: $(cat "$T/bad.ls")"
if grep -qw "lie" "$T/bad.ls" && debugfs -R "stat /lie" "$T/bad/data.img" 2>/dev/null | grep -q "Size: 20000"; then
  fail "state $bad holds the lie whole, yet it failed"
fi
if "$NVJ" crash image "$rec" --state 999999999 --out "$T/none" >"$T/none.log" 2>&1; then fail "a state that is not there was written"; fi
grep -q "no state 999999999" "$T/none.log" || fail "the missing state is not named: $(cat "$T/none.log")"

# Two shards, merged: the same bytes as one run (the ground truth on the
# detailed failing states and a sample of the others, as by default; the
# details of the first 3 failing states of each signature, which each shard
# gives its own first 3 and the merge trims to all shards' first 3); the
# second shard from Slurm's variables.
"$NVJ" crash check "$rec" --per-signature 3 --out "$T/one" >"$T/one.log" || true
"$NVJ" crash check "$rec" --per-signature 3 --shard 0/2 --out "$T/s0" >"$T/s0.log" || true
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2 "$NVJ" crash check "$rec" --per-signature 3 \
  --out "$T/s1" >"$T/s1.log" || true
grep -q "shard 1 of 2 (from Slurm)" "$T/s1.log" || fail "the shard was not taken from Slurm's variables"
status=0
"$NVJ" crash merge --out "$T/merged" "$T/s0" "$T/s1/results.json" >"$T/merge.log" || status=$?
cat "$T/merge.log"
[ "$status" = 1 ] || fail "nvj crash merge exited $status, not 1"
check_json crash-results "$T/s0/results.json" "$T/s1/results.json"
if ! cmp "$T/one/results.json" "$T/merged/results.json"; then
  python3 - "$T/one/results.json" "$T/merged/results.json" <<'PY' || true
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for key in a:
    if key != "states" and a[key] != b.get(key):
        print(f"{key}: {a[key]} against {b.get(key)}")
for x, y in zip(a["states"], b["states"]):
    if x != y:
        print("first state that differs:", json.dumps(x), json.dumps(y), sep="\n")
        break
PY
  tail -n 5 "$T/one.log" "$T/s0.log" "$T/s1.log"
  fail "the merged shards differ from the unsharded run"
fi
python3 - "$T/merged/results.json" <<'PY' || fail "the details are not those of the first 3 failing states of each signature"
import json, sys
merged = json.load(open(sys.argv[1]))
failing = [s for s in merged["states"] if s["verdict"] == "fail"]
assert failing, "no failing state"
signatures = {s["signature"] for s in failing}
for sig in signatures:
    mine = [s for s in failing if s["signature"] == sig]
    assert all("cause" in s and "kept_changes" in s and "ground_truth" in s for s in mine[:3]), sig
    assert not any("cause" in s or "kept_changes" in s for s in mine[3:]), sig
    listed = next(g for g in merged["signatures"] if g["signature"] == sig)
    assert listed["states"] == len(mine) and listed["first"] == mine[0]["ordinal"] and listed["detailed"] == min(3, len(mine))
print(f"{len(signatures)} signatures, the first 3 of each detailed")
PY
"$NVJ" crash check "$rec" --per-signature 5 --shard 1/2 --out "$T/s1-other" >/dev/null || true
if "$NVJ" crash merge --out "$T/m3" "$T/s0" "$T/s1-other" >"$T/m3.log" 2>&1; then fail "shards checked with other options were merged"; fi
grep -q "options differ" "$T/m3.log" || fail "merge did not say the options differ: $(cat "$T/m3.log")"
if "$NVJ" crash merge --out "$T/m2" "$T/s0" "$T/s0" >"$T/m2.log" 2>&1; then fail "a shard given twice was merged"; fi
grep -q "given twice" "$T/m2.log" || fail "merge did not say the shard was given twice: $(cat "$T/m2.log")"

# nvj crash states counts what check checked.
"$NVJ" crash states --json "$rec" >"$T/states.json"
python3 - "$T/states.json" "$T/one/results.json" <<'PY' || fail "nvj crash states and check disagree"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["unique"] == b["enumeration"]["unique"] and a["states"] == b["enumeration"]["states"]
PY
# A budget of 300 states: a sample over every crash point with states, and
# the report and the output say how many were not checked and how.
status=0
"$NVJ" crash check "$rec" --every 3 --max-states 300 --verify none --out "$T/budget" >"$T/budget.log" || status=$?
[ "$status" = 1 ] || fail "the budget's check exited $status, not 1 (the lie is in the sample)"
check_json crash-results "$T/budget/results.json"
grep -q "not checked: [0-9]* unique states; every one: nvj crash check $rec --max-states 0" "$T/budget.log" ||
  fail "the output does not say what was not checked: $(tail -n 4 "$T/budget.log")"
grep -q "unique states were not checked\*\*: .nvj crash check $rec --max-states 0" "$T/budget/table.md" ||
  fail "the report does not say what was not checked"
python3 - "$T/budget/results.json" "$T/all/results.json" <<'PY' || fail "the sample is not spread over the crash points"
import json, sys
b, a = (json.load(open(f)) for f in sys.argv[1:])
c = b["coverage"]
assert c["sampled"] and c["taken"] == c["checked"] == 300 == len(b["states"]), c
assert c["not_checked"] == a["coverage"]["unique"] - 300, c
points = sorted({s["point"] for s in b["states"]})
with_states = sorted({s["point"] for s in a["states"]})
assert len(points) >= 0.6 * min(len(with_states), 300), c["points"]  # (point, strategy) groups spread evenly
assert points[0] <= with_states[len(with_states) // 20] and points[-1] >= with_states[-len(with_states) // 20 - 1], "not over the whole run"
sampled = {s["ordinal"]: s["verdict"] for s in b["states"]}
whole = {s["ordinal"]: s["verdict"] for s in a["states"]}
assert all(whole[o] == v for o, v in sampled.items()), "a sampled state's verdict differs from the whole check's"
print(f"300 of {c['unique']} states over {c['points']['checked']} crash points")
PY
echo "PASS"
