#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# An exploration that lasts (nvj crash explore --resume), on this host's
# kernel, over a slice of seq-2 (the link workloads of shard 0/6: 40) under
# a planted fault (nobarrier: the disk's cache is never flushed, so every
# workload fails somewhere; 40 states each, a sample):
#   - run once, never stopped;
#   - run again, killed (SIGKILL) once 8 outcomes are logged, resumed (what
#     the killed run left is cleared), stopped with SIGTERM (as Slurm
#     preempts) once 20 are, a line cut short left at the end of the log,
#     and resumed to the end: its explore.json lists the same workloads in
#     the same order as the run never stopped, each with the same verdict
#     (an error, the oracle's error; failing, where the run never stopped
#     found 5 or more of the 40 failing: a sample drawn from another
#     recording of the same workload may miss one or two), is valid, and
#     says it was not interrupted; each workload was explored once (its
#     outcome logged once); nothing is left behind;
#   - bad input: --resume with another option, on a folder with no plan, on
#     a plan that is no plan, on an outcome log with a line that is no
#     outcome; --out over an exploration already there: exit 2, naming what
#     is wrong, nothing already there changed.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

slice=(--bound seq-2 --ops link --shard 0/6 --mount-options nobarrier --no-minimize --max-states 40)

run_explore "$T/whole.log" "${slice[@]}" --out "$T/whole"
[ "$STATUS" = 1 ] || fail "the slice under nobarrier exited $STATUS, not 1 (findings)"

# start_explore LOG ARGS... : nvj crash explore in the background, its PID in PID.
start_explore() {
  local log=$1; shift
  "$NVJ" crash explore "$@" >"$log" 2>&1 &
  PID=$!
  _servers+=("$PID")
}
# logged N : waits (up to 120 s) until N outcomes are in the resumed folder's log.
logged() {
  local n
  for _ in $(seq 1 1200); do
    n=0
    [ ! -f "$T/resumed/outcomes.jsonl" ] || n=$(wc -l <"$T/resumed/outcomes.jsonl")
    [ "$n" -ge "$1" ] && return 0
    kill -0 "$PID" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

start_explore "$T/first.log" "${slice[@]}" --out "$T/resumed"
logged 8 || fail "the first run did not log 8 outcomes: $(tail -n 5 "$T/first.log")"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
_servers=()
start_explore "$T/second.log" --resume "$T/resumed"  # first: it clears what the killed run left
killed=$PID
[ -s "$T/resumed/plan.json" ] || fail "no plan.json before the first workload"
logged 20 || fail "the resumed run did not get to 20 outcomes: $(tail -n 5 "$T/second.log")"
grep -q "cleared what a run that was killed left" "$T/second.log" ||
  fail "the resumed run did not clear what the killed one left: $(head -n 3 "$T/second.log")"
grep -Eq "^== exploring 40 of the 238 workloads of seq-2 \(shard 0/6\), ([8-9]|1[0-9]) of them explored before$" "$T/second.log" ||
  fail "the resumed run does not say how many were explored before: $(grep '^== exploring' "$T/second.log")"
kill -TERM "$PID"
STATUS=0
wait "$PID" || STATUS=$?
_servers=()
[ "$STATUS" = 1 ] || fail "SIGTERM: exit $STATUS, not 1"
experiment_leftovers "$killed" explore || fail "the run stopped by SIGTERM left something behind"
grep -q "^== interrupted: nvj crash explore --resume $T/resumed goes on with the [0-9]* workloads left$" "$T/second.log" ||
  fail "the stopped run does not say how to go on: $(tail -n 3 "$T/second.log")"
printf '{"ordinal": 9' >>"$T/resumed/outcomes.jsonl"  # a line a kill cut short

run_explore "$T/third.log" --resume "$T/resumed"
[ "$STATUS" = 1 ] || fail "the last resume exited $STATUS, not 1 (findings)"
grep -Eq "^40 workloads, [0-9]+ states checked in [0-9.]+ s, [0-9]+ findings$" "$T/third.log" ||
  fail "no closing line for 40 workloads: $(tail -n 2 "$T/third.log")"
check_json crash-explore "$T/resumed/explore.json"
python3 - "$T/whole/explore.json" "$T/resumed/explore.json" "$T/resumed/outcomes.jsonl" <<'PY' || fail "the resumed exploration is not the one never stopped"
import json, sys
whole, resumed = (json.load(open(p)) for p in sys.argv[1:3])
verdicts = lambda r: [(w["ordinal"], w["name"], w["error"], w["oracle_error"]) for w in r["workloads"]]
assert verdicts(whole) == verdicts(resumed), [a for a, b in zip(verdicts(whole), verdicts(resumed)) if a != b]
assert len(resumed["workloads"]) == 40
for a, b in zip(whole["workloads"], resumed["workloads"]):
    assert a["failing"] < 5 or b["failing"] > 0, (a["name"], a["failing"], b["failing"])
assert sum(w["failing"] >= 5 for w in whole["workloads"]) >= 30, [w["failing"] for w in whole["workloads"]]
for key in ("bound", "ops", "filesystem", "mount_options", "promises", "parameters", "max_states", "shard",
            "workloads_in_bound", "explored", "errors", "oracle_errors", "rules"):
    assert whole[key] == resumed[key], (key, whole[key], resumed[key])
assert not resumed["interrupted"]
logged = [json.loads(line)["ordinal"] for line in open(sys.argv[3])]
assert sorted(logged) == sorted(w["ordinal"] for w in whole["workloads"]), logged  # each once
PY

# Bad input: exit 2, naming it; nothing there changed.
before=$(md5sum "$T/resumed/plan.json" "$T/resumed/outcomes.jsonl")
expect_exit2() {  # expect_exit2 WHAT ARGS...
  local what=$1; shift
  STATUS=0
  "$NVJ" crash explore "$@" >"$T/bad.log" 2>&1 || STATUS=$?
  [ "$STATUS" = 2 ] || fail "$*: exit $STATUS, not 2"
  grep -q -- "$what" "$T/bad.log" || fail "$*: the error does not say '$what': $(cat "$T/bad.log")"
}
expect_exit2 "--bound excludes --resume" --resume "$T/resumed" --bound seq-1
expect_exit2 "holds an exploration already" "${slice[@]}" --out "$T/resumed"
mkdir "$T/empty"
expect_exit2 "plan.json: no such file" --resume "$T/empty"
mkdir "$T/notaplan" && echo '{"workloads": 3}' >"$T/notaplan/plan.json"
expect_exit2 "not a plan" --resume "$T/notaplan"
mkdir "$T/badline" && cp "$T/resumed/plan.json" "$T/badline/" && printf 'x\n{"ordinal": 0}\n' >"$T/badline/outcomes.jsonl"
expect_exit2 "outcomes.jsonl, line 1" --resume "$T/badline"
[ "$before" = "$(md5sum "$T/resumed/plan.json" "$T/resumed/outcomes.jsonl")" ] || fail "bad input changed the exploration"
echo "PASS"
