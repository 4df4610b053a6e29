#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The crash lab explores by itself (nvj crash explore), on this host's kernel:
#   - the enumeration: seq-1 lists at least 300 workloads (ACE's seq-1:
#     328), every name its own; seq-2's count; --workload N names one, a
#     list several in its order; --sample N --seed S draws N of seq-3, the
#     same for a seed, its shards sharing it out;
#   - a sixth of seq-1 (--shard 0/6), every operation among it, on one
#     server and one attach, each workload from the kept base: exit 0, no
#     finding, every workload's states checked, the closing line, explore.json
#     valid, nothing left behind;
#   - a planted fault (nobarrier: the disk's volatile cache is never
#     flushed): overwrites and replaces by rename fail, each failure naming
#     the rule it breaks and its source, with a reproducer that nvj crash
#     run runs as it is: it fails with nobarrier and passes without it (so
#     its bytes and facts are the explorer's);
#   - the internal journal and data=journal: a slice of seq-1 passes; XFS
#     and btrfs, checked by the kernel, a slice of their renames and links;
#   - shards merged by nvj crash merge, which refuses a missing shard and
#     one of another exploration;
#   - SIGTERM mid-run: it ends within 30 s, takes the lab down and writes
#     explore.json of what it finished (interrupted);
#   - bad input: an unknown operation, an empty bound, a shard out of range,
#     a workload out of range, a sample of none or of more than the bound, a
#     seed without a sample, a sample with --workload, a filesystem unknown or one the host cannot
#     make (no mkfs.xfs), a parameter that is no PARAM=VALUE, record=
#     (its own), fs= other than none for XFS, an fs- parameter for btrfs,
#     a data export too small for XFS, --periodic-commit on XFS or beside a commit= of its own: exit 2,
#     naming it;
#   - --periodic-commit: a seq-2 workload (truncate, then an append and
#     its fsync) shows a jbd2 commit between the append's data write and
#     the data disk's next flush, where it shows none without it;
#   - fs-free=old-data on that workload: no stale state with the journal
#     inside; with it outside, any failing state is F4's (old data in
#     A/foo or A/bar, the kernel's mount agreeing), its reproducer carrying the
#     parameter; the recordings stay small.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs btrfs

# failed OUT WHAT: fails with WHAT, after printing each failing workload's
# check (its signatures and first failing states) from OUT, so that a
# finding where none is expected can be told from the log alone.
failed() {
  python3 - "$1" <<'PY' || true
import json, sys
out = sys.argv[1]
for w in json.load(open(f"{out}/explore.json"))["workloads"]:
    if w.get("failing") or w.get("error") or w.get("oracle_error"):
        print(f"== workload {w['ordinal']} {w['name']} ({w['steps']}): {w.get('failing')} failing, "
              f"error {w.get('error')}, oracle error {w.get('oracle_error')}; its check:")
        try:
            print(open(f"{out}/workloads/{w['ordinal']}/check.log").read()[-4000:])
        except OSError as e:
            print(e)
PY
  fail "$2"
}

# The enumeration.
"$NVJ" crash explore --list >"$T/seq1.list"
n1=$(wc -l <"$T/seq1.list")
[ "$n1" -ge 300 ] || fail "seq-1 has $n1 workloads, fewer than 300"
[ "$(cut -f2 "$T/seq1.list" | sort -u | wc -l)" = "$n1" ] || fail "two seq-1 workloads share a name"
n2=$("$NVJ" crash explore --bound seq-2 --list | wc -l)
[ "$n2" -gt $((n1 * 300)) ] || fail "seq-2 has $n2 workloads"
echo "seq-1: $n1 workloads, seq-2: $n2"
line=$("$NVJ" crash explore --list --workload 100)
[ "$line" = "$(sed -n 101p "$T/seq1.list")" ] || fail "--workload 100 lists '$line'"
# A sample of seq-3 (84 million workloads): 20 distinct ordinals, ascending,
# the same for the same seed, another for another, the seed said on stderr;
# shards of it share the sample out.
"$NVJ" crash explore --bound seq-3 --sample 20 --seed 7 --list >"$T/sample.a" 2>"$T/sample.err"
"$NVJ" crash explore --bound seq-3 --sample 20 --seed 7 --list >"$T/sample.b" 2>/dev/null
"$NVJ" crash explore --bound seq-3 --sample 20 --seed 8 --list >"$T/sample.c" 2>/dev/null
[ "$(wc -l <"$T/sample.a")" = 20 ] || fail "--sample 20 lists $(wc -l <"$T/sample.a") workloads"
cut -f1 "$T/sample.a" | sort -n -c || fail "the sample is not listed by ordinal"
[ "$(cut -f1 "$T/sample.a" | sort -u | wc -l)" = 20 ] || fail "the sample lists a workload twice"
cmp -s "$T/sample.a" "$T/sample.b" || fail "--seed 7 drew two samples"
! cmp -s "$T/sample.a" "$T/sample.c" || fail "--seed 7 and --seed 8 drew the same sample"
grep -q "^== a sample of 20 workloads of seq-3, seed 7 (--seed 7 draws it again)$" "$T/sample.err" ||
  fail "the sample's seed is not said: $(cat "$T/sample.err")"
for i in 0 1 2; do "$NVJ" crash explore --bound seq-3 --sample 20 --seed 7 --shard $i/3 --list 2>/dev/null; done |
  sort -n >"$T/sample.shards"
sort -n "$T/sample.a" | cmp -s - "$T/sample.shards" || fail "three shards of the sample are not the sample"

# A sixth of seq-1, on the defaults (e2fsck on every state's structure): nothing fails.
run_explore "$T/sixth.log" --shard 0/6 --out "$T/sixth"
[ "$STATUS" = 0 ] || failed "$T/sixth" "a sixth of seq-1 exited $STATUS"
q=$(( (n1 + 5) / 6 ))
grep -Eq "^$q workloads, [0-9]+ states checked in [0-9.]+ s, 0 findings$" "$T/sixth.log" ||
  fail "no closing line for $q workloads and 0 findings"
check_json crash-explore "$T/sixth/explore.json"
python3 - "$T/sixth/explore.json" <<'PY' || fail "the sixth's explore.json is not what it should be"
import json, sys
r = json.load(open(sys.argv[1]))
w = r["workloads"]
assert r["shard"] == {"index": 0, "count": 6} and len(w) == r["explored"], (r["shard"], len(w))
assert r["structure"] == "every", r["structure"]
assert [x["ordinal"] for x in w] == list(range(0, r["workloads_in_bound"], 6))
assert all(x["states"] > 0 and x["failing"] == 0 and x["error"] is None for x in w)
assert r["states"] == sum(x["states"] for x in w)
kinds = {x["name"].split("(")[0] for x in w}
assert len(kinds) >= 20, sorted(kinds)
assert all(len(rule["source"]) > 10 for rule in r["rules"])
PY
ls "$T/sixth/workloads/0/recording.nvjrec" "$T/sixth/workloads/0/results.json" >/dev/null ||
  fail "a workload's recording and results are missing"

# The other layouts the lab serves (before the planted fault, so that a
# finding here is near the top of the output).
run_explore "$T/internal.log" --shard 1/12 --keep-workloads failing --out "$T/internal" fs-journal=internal:16M
[ "$STATUS" = 0 ] || failed "$T/internal" "seq-1 with an internal journal exited $STATUS"
# --keep-workloads failing: a passing workload's folder goes once it is
# logged; its entry stays.
python3 - "$T/internal" <<'PY' || fail "--keep-workloads failing kept a passing workload's folder, or lost an entry"
import json, os, sys
out = sys.argv[1]
r = json.load(open(f"{out}/explore.json"))
assert len(r["workloads"]) == r["explored"] > 20, r["explored"]
for w in r["workloads"]:
    kept = os.path.isdir(f"{out}/workloads/{w['ordinal']}")
    assert kept == bool(w["failing"] or w["error"] or w["oracle_error"]), (w["ordinal"], kept)
assert json.load(open(f"{out}/plan.json"))["options"]["keep_workloads"] == "failing"
PY
run_explore "$T/journal.log" --shard 2/12 --mount-options data=journal --out "$T/journal"
[ "$STATUS" = 0 ] || failed "$T/journal" "seq-1 with data=journal exited $STATUS"

# A planted fault: nobarrier. Four of the 34 workloads of the two operations
# (each takes thousands of states under nobarrier): an overwrite with
# fsync of the file and of its directory, a replace by rename within a
# directory and across two.
run_explore "$T/nobarrier.log" --mount-options nobarrier --ops write_overwrite,rename_over --workload 0,2,22,26 \
  --out "$T/nobarrier"
[ "$STATUS" = 1 ] || fail "the nobarrier exploration exited $STATUS, not 1"
check_json crash-explore "$T/nobarrier/explore.json"
repro=$(python3 - "$T/nobarrier/explore.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
failing = [w for w in r["workloads"] if w["failing"] > 0]
assert r["findings"] == len(failing) == len(r["workloads"]) == 4, (r["findings"], len(failing), len(r["workloads"]))
rules = {v.get("rule") for w in failing for f in w["failures"] for v in f.get("violations", [])}
assert rules and rules <= {rule["id"] for rule in r["rules"]}, rules
for w in failing:
    for f in w["failures"]:
        for v in f.get("violations", []):
            assert "rule" not in v or len(v["source"]) > 10
first = next(w for w in failing if w["name"].startswith("write_overwrite(A/foo) fsync(A/foo)"))
print(sys.argv[1].rsplit("/", 1)[0] + "/" + first["reproducer"])
PY
) || fail "the nobarrier findings are not what they should be"
[ -f "$repro" ] || fail "no reproducer at $repro"

# A seq-2 finding minimized: the overwrite before a replace by rename is not
# what fails under nobarrier; the replace alone is.
w=$("$NVJ" crash explore --bound seq-2 --ops write_overwrite,rename_over --list |
  awk -F'\t' '$2 == "write_overwrite(A/foo); rename_over(A/foo,A/bar) fsync(A)" { print $1 }')
[ -n "$w" ] || fail "no seq-2 workload write_overwrite(A/foo); rename_over(A/foo,A/bar) fsync(A)"
run_explore "$T/seq2.log" --bound seq-2 --ops write_overwrite,rename_over --workload "$w" --mount-options nobarrier \
  --out "$T/seq2"
[ "$STATUS" = 1 ] || fail "the seq-2 finding exited $STATUS, not 1"
check_json crash-explore "$T/seq2/explore.json"
python3 - "$T/seq2/explore.json" <<'PY' || fail "the seq-2 finding was not minimized"
import json, os, sys
w = json.load(open(sys.argv[1]))["workloads"][0]
m = w["minimal"]
assert m["name"] == "rename_over(A/foo,A/bar) fsync(A)" and m["failing"] > 0, m
assert os.path.exists(os.path.join(os.path.dirname(sys.argv[1]), m["reproducer"])), m["reproducer"]
PY
run_crash "$T/repro-fault.log" run --mount-options nobarrier -- sh "$repro"
[ "$STATUS" = 1 ] || fail "the reproducer with nobarrier exited $STATUS, not 1"
run_crash "$T/repro-clean.log" run -- sh "$repro"
[ "$STATUS" = 0 ] || fail "the reproducer without nobarrier exited $STATUS, not 0 (its facts are not the explorer's)"
grep -q "fact file A/foo size 8192" "$repro" || fail "the reproducer posts no file fact"

# XFS (its log on the NVRAM export) and btrfs: the kernel checks a sample of
# each workload's states; renames, links and appends pass.
run_explore "$T/xfs.log" --fs xfs --ops rename_over,link,write_append --max-states 8 --shard 0/2 --out "$T/xfs"
[ "$STATUS" = 0 ] || failed "$T/xfs" "XFS exited $STATUS"
grep -q "making xfs on .* (log on " "$T/xfs.log" || fail "XFS's log is not on the journal export"
run_explore "$T/btrfs.log" --fs btrfs --ops rename_over,rename_new,link,symlink --max-states 8 --shard 1/2 --out "$T/btrfs"
[ "$STATUS" = 0 ] || failed "$T/btrfs" "btrfs exited $STATUS"
python3 - "$T/xfs/explore.json" "$T/btrfs/explore.json" <<'PY' || fail "XFS's or btrfs' exploration is not what it should be"
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    assert r["max_states"] == 8 and r["explored"] > 10, (path, r["explored"])
    assert all(0 < w["states"] <= 8 and w["failing"] == 0 for w in r["workloads"]), path
PY

# Shards and their merge (the Slurm test runs them on a cluster): the merge
# refuses a missing shard and a shard of another exploration.
for i in 0 1; do
  run_explore "$T/rmdir$i.log" --ops rmdir --shard "$i/2" --out "$T/rmdir/shard-$i"
  [ "$STATUS" = 0 ] || fail "rmdir shard $i exited $STATUS"
done
run_explore "$T/unlink.log" --ops unlink --shard 1/2 --out "$T/unlink"
"$NVJ" crash merge --out "$T/rmdir/merged" "$T/rmdir/shard-0" "$T/rmdir/shard-1" >"$T/merge.log" 2>&1 ||
  fail "the merge failed: $(cat "$T/merge.log")"
grep -Eq "^[0-9]+ workloads, [0-9]+ states checked in [0-9.]+ s, 0 findings$" "$T/merge.log" || fail "the merge's closing line"
check_json crash-explore "$T/rmdir/merged/explore.json"
status=0
"$NVJ" crash merge --out "$T/rmdir/m1" "$T/rmdir/shard-0" >"$T/merge1.log" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "shard 1 of 2 is missing" "$T/merge1.log" || fail "a missing shard: exit $status, $(cat "$T/merge1.log")"
status=0
"$NVJ" crash merge --out "$T/rmdir/m2" "$T/rmdir/shard-0" "$T/unlink" >"$T/merge2.log" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "explored with another ops" "$T/merge2.log" || fail "another exploration's shard: exit $status, $(cat "$T/merge2.log")"
# A shard whose explore.json names an index past its count (edited by hand).
cp -r "$T/rmdir/shard-1" "$T/rmdir/shard-9"
python3 - "$T/rmdir/shard-9/explore.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["shard"]["index"] = 9
json.dump(j, open(sys.argv[1], "w"))
PY
status=0
"$NVJ" crash merge --out "$T/rmdir/m3" "$T/rmdir/shard-0" "$T/rmdir/shard-9" >"$T/merge3.log" 2>&1 || status=$?
[ "$status" = 2 ] || fail "a shard index past the count: exit $status, $(cat "$T/merge3.log")"
grep -q "shard-9 calls itself shard 9 of 2: no such shard" "$T/merge3.log" ||
  fail "a shard index past the count: $(cat "$T/merge3.log")"

# SIGTERM mid-run.
"$NVJ" crash explore --out "$T/term" >"$T/term.log" 2>&1 &
pid=$!
_servers+=("$pid")
# Once 5 outcomes are logged: the checks still running when the signal
# comes are dropped (their workloads run again on --resume).
logged_outcomes() { [ -f "$T/term/outcomes.jsonl" ] && wc -l <"$T/term/outcomes.jsonl" || echo 0; }
for _ in $(seq 1 300); do
  [ "$(logged_outcomes)" -lt 5 ] || break
  sleep 0.1
done
[ "$(logged_outcomes)" -ge 5 ] || fail "the exploration did not get to its fifth outcome"
kill -TERM "$pid"
end=$((SECONDS + 30))
while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
kill -0 "$pid" 2>/dev/null && fail "nvj crash explore still runs 30 s after SIGTERM"
STATUS=0
wait "$pid" || STATUS=$?
_servers=()
[ "$STATUS" = 1 ] || fail "SIGTERM: exit $STATUS, not 1"
experiment_leftovers "$pid" explore || fail "SIGTERM left something behind"
check_json crash-explore "$T/term/explore.json"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["interrupted"] and 5 <= r["explored"] < r["workloads_in_bound"], r["explored"]' \
  "$T/term/explore.json" || fail "the interrupted run's explore.json does not say so"

# Bad input: exit 2, naming what is wrong.
expect_usage() {
  local what=$1; shift
  local status=0
  "$NVJ" crash explore "$@" >"$T/bad.out" 2>&1 || status=$?
  [ "$status" = 2 ] || fail "nvj crash explore $*: exit $status, not 2"
  grep -q -- "$what" "$T/bad.out" || fail "nvj crash explore $*: the error does not name $what: $(cat "$T/bad.out")"
}
expect_usage "no operation 'frobnicate'" --ops write_append,frobnicate --list
expect_usage "--bound ''" --bound "" --list
expect_usage "--bound seq-4" --bound seq-4 --list
expect_usage "4/4" --shard 4/4 --list
expect_usage "--workload $n1" --workload "$n1" --list
expect_usage "--workload 3,5,3: 3 is given twice" --workload 3,5,3 --list
expect_usage "--workload 3,: an empty ordinal" --workload 3, --list
expect_usage "--sample" --sample 0 --list
expect_usage "--sample $((n1 + 1)): seq-1 has $n1 workloads" --sample $((n1 + 1)) --list
expect_usage "--seed is --sample's" --seed 3 --list
expect_usage "not with --workload" --sample 3 --workload 5 --list
[ "$("$NVJ" crash explore --list --workload 100,7 | cut -f1 | tr '\n' ' ')" = "100 7 " ] ||
  fail "--workload 100,7 does not list those two, in that order"
mkdir -p "$T/bin" && ln -sf "$(command -v sh)" "$T/bin/sh"
status=0
PATH="$T/bin" "$NVJ" crash explore --fs xfs --out "$T/nomkfs" >"$T/bad.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "--fs xfs without mkfs.xfs: exit $status, not 2"
grep -q "this host cannot make it (mkfs.xfs is not installed" "$T/bad.out" || fail "without mkfs.xfs: $(cat "$T/bad.out")"
expect_usage "--fs=ext3" --fs ext3 --list
expect_usage "'data' is no PARAM=VALUE" --out "$T/bad" data
expect_usage "--max-states" --max-states many --list
expect_usage "--keep-workloads" --keep-workloads some --list
expect_usage "--out DIR is required" --ops rmdir
expect_usage "record= is its own to set" --out "$T/bad" record=/tmp/r.nvjrec
expect_usage "fs=ext4 with --fs xfs" --fs xfs --out "$T/bad" fs=ext4
expect_usage "fs-free=old-data with --fs btrfs: the fs- parameters shape the ext4" --fs btrfs --out "$T/bad" fs-free=old-data
expect_usage "data=256M with --fs xfs: XFS needs a data export of at least 300 MiB" --fs xfs --out "$T/bad" data=256M
expect_usage "--periodic-commit is ext4's" --periodic-commit --fs xfs --list
expect_usage "must not set commit= too" --periodic-commit --mount-options noatime,commit=5 --list

# --periodic-commit: after the core operation (an append to A/foo, then
# its fsync), A/foo's data written back and a periodic commit before the
# fsync. Without it the fsync writes the data, flushes the data disk and
# then commits (jbd2_trans_will_send_data_barrier); with it a commit block
# comes between A/foo's data write and the data disk's next flush: the
# window of F4 (docs/findings/F4-stale-data-external-journal.md), which
# shows old data only where the blocks held some (here they held zeroes,
# which the nostale rule allows: exit 0).
n=$("$NVJ" crash explore --bound seq-2 --ops truncate_shrink,write_append --list |
  awk -F'\t' '$2 == "truncate_shrink(A/bar) sync; write_append(A/foo) fsync(A/foo)" { print $1 }')
[ -n "$n" ] || fail "seq-2 lists no 'truncate_shrink(A/bar) sync; write_append(A/foo) fsync(A/foo)'"
for mode in plain periodic; do
  extra=()
  [ "$mode" = plain ] || extra=(--periodic-commit)
  run_explore "$T/$mode.log" --bound seq-2 --ops truncate_shrink,write_append --workload "$n" "${extra[@]}" \
    --out "$T/$mode"
  [ "$STATUS" = 0 ] || { failed "$T/$mode" "--workload $n ($mode): exit $STATUS, not 0"; }
  "$NVJ" crash frames "$T/$mode/workloads/$n/recording.nvjrec" --point 0 --all --json >"$T/$mode.frames" 2>"$T/$mode.err" ||
    fail "nvj crash frames on the $mode run: $(tail -n 3 "$T/$mode.err")"
done
check_json crash-explore "$T/periodic/explore.json"
python3 - "$T" <<'PY' || fail "--periodic-commit: no commit between A/foo's data write and the data disk's flush"
import json, sys
t = sys.argv[1]
plan = json.load(open(f"{t}/periodic/plan.json"))
assert plan["options"]["periodic_commit"] is True and plan["options"]["mount_options"] == "commit=1", plan["options"]
explored = json.load(open(f"{t}/periodic/explore.json"))
assert explored["periodic_commit"] is True and explored["mount_options"] == "commit=1", explored["mount_options"]
def commit_before_flush(path):
    """After the last write of A/foo's data: does a jbd2 commit block come before the data disk's next flush?"""
    frames = json.load(open(path))["frames"]
    what = lambda f: " | ".join(m["what"] for m in f.get("meaning", []))
    writes = [i for i, f in enumerate(frames)
              if f["kind"] == "write" and f["export"] == "data" and "file data of A/foo" in what(f)]
    assert writes, "no write of A/foo's data in the frames"
    for f in frames[writes[-1] + 1:]:
        if f["kind"] == "flush" and f["export"] == "data":
            return False
        if f["kind"] == "write" and f["export"] == "journal" and "jbd2 commit block" in what(f):
            return True
    return False
assert not commit_before_flush(f"{t}/plain.frames"), "without --periodic-commit a commit came before the flush"
assert commit_before_flush(f"{t}/periodic.frames"), "with --periodic-commit no commit came before the flush"
print("--periodic-commit: a commit between A/foo's data write and the data disk's flush; none without it")
PY

# fs-free=old-data, the same workload with --periodic-commit: the free
# blocks hold old data, so a state where A/foo's blocks are mapped written
# and their data was dropped shows it (the nostale rule). With the journal
# inside, the commit's flush comes first: no stale state (exit 0). With it
# on the journal device, F4's window: whether this kernel shows old data
# there is the kernel's (F4, fixed or not); every state that does must be
# stale content, confirmed by the kernel's mount: of A/foo after the
# periodic commit, or of A/bar after the setup's sync() (whose first pass
# commits before its second flushes: F4's sync() path), and its
# reproducer's nvj crash run line must carry fs-free=old-data. Each
# recording keeps the 256 MiB disk's old data as ranges: it stays small.
for layout in inside outside; do
  params=(fs-free=old-data)
  [ "$layout" = outside ] || params+=(fs-journal=internal)
  run_explore "$T/old-$layout.log" --bound seq-2 --ops truncate_shrink,write_append --workload "$n" --periodic-commit \
    --out "$T/old-$layout" "${params[@]}"
  case "$layout:$STATUS" in
    inside:0 | outside:0 | outside:1) ;;
    *) failed "$T/old-$layout" "fs-free=old-data, journal $layout: exit $STATUS" ;;
  esac
  size=$(stat -c %s "$T/old-$layout/workloads/$n/recording.nvjrec")
  [ "$size" -lt $((4 << 20)) ] || fail "fs-free=old-data, journal $layout: a recording of $size bytes (old data as bytes?)"
done
python3 - "$T" "$n" <<'PY' || fail "fs-free=old-data with the journal outside: a failure that is not F4's"
import json, os, sys
t, n = sys.argv[1], int(sys.argv[2])
plan = json.load(open(f"{t}/old-outside/plan.json"))
assert "fs-free=old-data" in plan["options"]["parameters"], plan["options"]["parameters"]
w = json.load(open(f"{t}/old-outside/explore.json"))["workloads"][0]
if not w["failing"]:
    print("fs-free=old-data, journal outside: no stale state on this kernel (F4 does not show)")
    sys.exit(0)
for f in w["failures"]:
    for v in f["violations"]:
        assert v["path"] in ("A/foo", "A/bar") and (v["what"], v["rule"]) == ("stale", "no-stale-data"), v
check = open(f"{t}/old-outside/workloads/{n}/check.log").read()
assert ", 0 disagreeing with the fast path" in check, check[-2000:]
assert "ground truth: fail" in check, check[-2000:]
script = open(f"{t}/old-outside/workloads/{n}/reproduce.sh").read()
assert "fs-free=old-data" in script.splitlines()[3], script.splitlines()[:5]
print(f"fs-free=old-data, journal outside: F4 shows in {w['failing']} of {w['states']} states, "
      "each old data in A/foo or A/bar, the kernel's mount agreeing")
PY
echo "PASS"
