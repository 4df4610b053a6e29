#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fstests' power-fail scenarios as the explorer's bound (nvj crash explore
# --bound fstests; docs/explore-rules.md), on this host's kernel:
#   - the list: every scenario named after its test (generic/NNN), as many
#     as crashlab/explore/fstests.cpp holds (80), generic/520's 37 cases
#     among them; --ops that leaves none, and a --promises level that is
#     neither posix nor tested, are bad input (exit 2, said);
#   - ext4, every crash state of every scenario (the fast path, e2fsck on
#     every state's structure): exit 0, no finding, no oracle error (each
#     test's facts hold on its own final state), explore.json lists the
#     tests' rules and names, for each scenario, the state its test's own
#     power cut leaves (passing), and the no-stale-data rule's facts were
#     posted; with --promises tested, half of the scenarios (a shard) pass
#     too, no oracle error, explore.json saying the level of each rule;
#   - a planted fault (nobarrier), on two scenarios with no setup (so that
#     no sync before them promises anything): a link made in new
#     directories, the top one fsynced (generic/498), and a
#     symlink renamed in a fsynced directory (779) fail, each failure citing
#     its test as its rule and fstests as its source, never minimized, and
#     explore.json says how many of the failing states are other than the
#     one fstests' cut leaves;
#   - XFS and btrfs, checked by the kernel: an eighth of the scenarios on
#     XFS (xfs_repair on each state is the costly part) and a third on
#     btrfs, 4 and 6 states a scenario, pass (the whole bound on both is in
#     docs/experiments.md).
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs btrfs

"$NVJ" crash explore --bound fstests --list >"$T/list"
n=$(wc -l <"$T/list")
[ "$n" = 80 ] || fail "the fstests bound lists $n scenarios, not 80"
[ "$(cut -f2 "$T/list" | grep -c '^generic/520: ')" = 37 ] || fail "generic/520 has not its 37 cases"
if cut -f2 "$T/list" | grep -qv '^generic/[0-9][0-9][0-9]: '; then fail "a scenario not named after its test"; fi
status=0
"$NVJ" crash explore --bound fstests --ops symlink --list >"$T/none.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "--bound fstests --ops symlink (no scenario): exit $status, not 2"
grep -q "no scenario's own steps are all among the operations given" "$T/none.out" || fail "no scenario: $(cat "$T/none.out")"
status=0
"$NVJ" crash explore --bound fstests --promises strict --list >"$T/level.out" 2>&1 || status=$?
[ "$status" = 2 ] || fail "--promises strict: exit $status, not 2"
grep -q -- "--promises=strict: expected posix or tested" "$T/level.out" || fail "--promises strict: $(cat "$T/level.out")"
ordinal() {  # ordinal TEST: the first scenario of TEST
  awk -F'\t' -v t="$1: " 'index($2, t) == 1 { print $1; exit }' "$T/list"
}

run_explore "$T/ext4.log" --bound fstests --out "$T/ext4"
[ "$STATUS" = 0 ] || fail "the fstests bound on ext4 exited $STATUS"
grep -Eq "^$n workloads, [0-9]+ states checked in [0-9.]+ s, 0 findings$" "$T/ext4.log" ||
  fail "no closing line for $n workloads and 0 findings"
check_json crash-explore "$T/ext4/explore.json"
python3 - "$T/ext4/explore.json" <<'PY' || fail "the fstests bound's explore.json is not what it should be"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["bound"] == "fstests" and r["oracle_errors"] == 0 and r["errors"] == 0, (r["oracle_errors"], r["errors"])
assert all(w["states"] > 0 and w["failing"] == 0 and w["error"] is None for w in r["workloads"])
assert all(w["fstests_cut"]["verdict"] == "pass" and w["fstests_cut"]["failing_elsewhere"] == 0 for w in r["workloads"])
ids = {x["id"] for x in r["rules"]}
assert {"fsync-file", "generic/342", "generic/520", "no-stale-data"} <= ids, sorted(ids)
PY

# The stricter level: fstests' tests generalized, on their own scenarios.
run_explore "$T/tested.log" --bound fstests --promises tested --shard 0/2 --out "$T/tested"
[ "$STATUS" = 0 ] || fail "the fstests bound on ext4 with --promises tested exited $STATUS"
check_json crash-explore "$T/tested/explore.json"
python3 - "$T/tested/explore.json" <<'PY' || fail "--promises tested: explore.json is not what it should be"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["promises"] == "tested" and r["oracle_errors"] == 0 and r["findings"] == 0 and r["explored"] == 40, r
levels = {x["id"]: x["level"] for x in r["rules"]}
assert levels["fsync-file-name"] == "tested" and levels["fsync-file"] == "posix" and levels["generic/342"] == "fstests", levels
PY
python3 - "$T/ext4/explore.json" <<'PY' || fail "--promises posix lists a rule of the level tested"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["promises"] == "posix" and all(x["level"] != "tested" for x in r["rules"]), r["rules"]
PY

# A planted fault: nobarrier.
run_explore "$T/nobarrier.log" --bound fstests --workload "$(ordinal generic/498),$(ordinal generic/779)" \
  --mount-options nobarrier --out "$T/nobarrier"
[ "$STATUS" = 1 ] || fail "the fstests scenarios under nobarrier exited $STATUS, not 1"
python3 - "$T/nobarrier/explore.json" <<'PY' || fail "the nobarrier findings do not cite their tests"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["findings"] == 2, r["findings"]
for w in r["workloads"]:
    test = w["name"].split(":")[0]
    rules = {v.get("rule") for f in w["failures"] for v in f.get("violations", [])}
    assert test in rules, (w["name"], rules)
    for f in w["failures"]:
        for v in f.get("violations", []):
            if v.get("rule") == test:
                assert v["source"] == "fstests tests/" + test, v
    assert "minimal" not in w, w["name"]  # a scenario is as its test wrote it
    cut = w["fstests_cut"]
    assert cut["failing_elsewhere"] == w["failing"] - (cut["verdict"] != "pass"), (w["name"], cut, w["failing"])
    print(f"{w['name'][:40]}: {w['failing']} failing states, fstests' own cut {cut['verdict']}")
PY

# XFS (its log on the NVRAM export) and btrfs, the kernel checking a sample.
run_explore "$T/xfs.log" --fs xfs --bound fstests --max-states 4 --shard 0/8 --out "$T/xfs"
[ "$STATUS" = 0 ] || fail "the fstests bound on XFS exited $STATUS"
run_explore "$T/btrfs.log" --fs btrfs --bound fstests --max-states 6 --shard 1/3 --out "$T/btrfs"
[ "$STATUS" = 0 ] || fail "the fstests bound on btrfs exited $STATUS"
python3 - "$T/xfs/explore.json" 4 10 "$T/btrfs/explore.json" 6 27 <<'PY' || fail "XFS's or btrfs' run is not what it should be"
import json, sys
for path, states, explored in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    r = json.load(open(path))
    assert r["explored"] == int(explored) and r["oracle_errors"] == 0, (path, r["explored"], r["oracle_errors"])
    assert all(0 < w["states"] <= int(states) and w["failing"] == 0 for w in r["workloads"]), path
PY
echo "PASS"
