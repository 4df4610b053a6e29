#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# two_builds.sh: the crash lab's speed in this build against another build of
# nvj (the peer: the commit before a change, built apart), in one run, their
# rounds alternated so that the machine's drift falls on both:
#   - the fast path: nvj crash check --verify none --max-states 0 on one
#     recording (nvj writers, 16 tasks x 16 chunks of 64 KiB, fsync after
#     each, made by this build's nvj crash run), states per CPU second;
#   - the explorer: nvj crash explore --shard 0/6 (a sixth of seq-1, every
#     operation among it), workloads per second and states per CPU second.
# The run fails when the builds' fast paths check other states of the same
# recording, or when their explorations differ in workloads or findings
# (an exploration's count of states varies from run to run of one build by
# a few tenths of a percent: the kernel's timing changes its recordings).
# Needs root (nvj crash run and explore attach loop devices and mount).
#
# Usage: bench/two_builds.sh --peer PATH [--peer-name TEXT] [--nvj PATH]
#                            [--rounds N] [--scratch DIR] [--markdown FILE]
#
# --peer is the other build's nvj (e.g. a git worktree of the commit before,
# built with cmake and ninja); --peer-name says what it is in the results
# (its commit; required with --markdown). With --markdown the working tree
# must be clean: the section names the commit this build was made from.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
peer=""
peer_name=""
rounds=3
scratch=/dev/shm
markdown=""
bench_option --nvj nvj text
bench_option --peer peer text
bench_option --peer-name peer_name text
bench_option --rounds rounds count
bench_option --scratch scratch text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ -n $peer ]] || bench_usage_error "--peer PATH is required: the other build's nvj"
[[ -x $peer ]] || bench_usage_error "--peer $peer: no such program"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash run and explore attach loop devices and mount)"
[[ -d $scratch ]] || bench_usage_error "--scratch $scratch: no such folder"
[[ -z $markdown || -n $peer_name ]] || bench_usage_error "--markdown needs --peer-name (the peer's commit)"
[[ -z $markdown ]] || bench_require_clean_tree
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
peer=$(cd "$(dirname "$peer")" && pwd)/$(basename "$peer")
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs losetup:mount python3
tmp=$(mktemp -d "$scratch/nvj-two-builds-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# timed LOG CMD...: runs CMD (exit 0 or 1: findings), its output in LOG and
# "wall user sys" in LOG.time.
timed() {
  local log=$1 status=0
  shift
  /usr/bin/time -f "%e %U %S" -o "$log.time" "$@" >"$log" 2>&1 || status=$?
  [[ $status == 0 || $status == 1 ]] || { tail -20 "$log" >&2; bench_fail "$* exited $status"; }
}

echo "two_builds: recording nvj writers, 16 MiB with an fsync after every 64 KiB"
"$nvj" crash run --out "$tmp/run" --verify none -- \
  "$nvj" writers --tasks 16 --dirs 4 --chunks 16 --chunk-size 64K --fsync each w >"$tmp/run.log" 2>&1 ||
  { cat "$tmp/run.log" >&2; bench_fail "nvj crash run failed"; }
rec="$tmp/run/recording.nvjrec"

for r in $(seq 1 "$rounds"); do
  echo "two_builds: round $r of $rounds: the fast path, then the explorer, each build in turn"
  for who in peer ours; do
    bin=$nvj
    if [[ $who == peer ]]; then bin=$peer; fi
    timed "$tmp/check.$who.$r" "$bin" crash check "$rec" --max-states 0 --verify none
    rm -rf "$tmp/explore.$who"
    timed "$tmp/explore.$who.$r" "$bin" crash explore --shard 0/6 --out "$tmp/explore.$who"
    cp "$tmp/explore.$who/explore.json" "$tmp/explore.$who.$r.json"
  done
done

TB_DIR=$tmp TB_ROUNDS=$rounds TB_MARKDOWN=$markdown TB_COMMAND=$command_line TB_PEER=${peer_name:-the peer} \
TB_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') TB_GIT=$(bench_git_rev) BENCH_DIR=$script_dir python3 - <<'PY'
import json, os, re, statistics, subprocess, sys
env = os.environ
d, rounds = env["TB_DIR"], int(env["TB_ROUNDS"])

def times(path):
    wall, user, sys_ = map(float, open(path + ".time").read().split()[-3:])
    return wall, user + sys_

def check(who):
    per_cpu, states = [], None
    for r in range(1, rounds + 1):
        log = open(f"{d}/check.{who}.{r}").read()
        m = re.search(r"^(\d+) states checked in [0-9.]+ s .*?, (\d+) failing$", log, re.M)
        if not m:
            sys.exit(f"two_builds: no closing line in {d}/check.{who}.{r}")
        states = (int(m.group(1)), int(m.group(2)))
        per_cpu.append(states[0] / times(f"{d}/check.{who}.{r}")[1])
    return statistics.median(per_cpu), states

def explore(who):
    wps, spc, outcome, states = [], [], None, []
    for r in range(1, rounds + 1):
        j = json.load(open(f"{d}/explore.{who}.{r}.json"))
        wall, cpu = times(f"{d}/explore.{who}.{r}")
        wps.append(j["explored"] / wall)
        spc.append(j["states"] / cpu)
        outcome = (j["explored"], j["findings"])
        states.append(j["states"])
    return statistics.median(wps), statistics.median(spc), outcome, (min(states), max(states))

ours_check, ours_states = check("ours")
peer_check, peer_states = check("peer")
ours_wps, ours_spc, ours_outcome, ours_range = explore("ours")
peer_wps, peer_spc, peer_outcome, peer_range = explore("peer")
if ours_states != peer_states:
    sys.exit(f"two_builds: the builds checked different states: ours {ours_states}, the peer's {peer_states}")
if ours_outcome != peer_outcome:
    sys.exit(f"two_builds: the explorations differ (workloads, findings): ours {ours_outcome}, the peer's {peer_outcome}")
low, high = min(ours_range[0], peer_range[0]), max(ours_range[1], peer_range[1])
rows = [
    ("fast path, states per CPU second", f"{ours_check:.0f}", f"{peer_check:.0f}", ours_check / peer_check),
    ("explore, workloads per second (wall)", f"{ours_wps:.2f}", f"{peer_wps:.2f}", ours_wps / peer_wps),
    ("explore, states per CPU second of nvj", f"{ours_spc:.0f}", f"{peer_spc:.0f}", ours_spc / peer_spc),
]
print()
print(f"two_builds: {ours_states[0]} states ({ours_states[1]} failing) by the fast path; explore: "
      f"{ours_outcome[0]} workloads, {low} to {high} states, {ours_outcome[1]} findings; medians of {rounds}")
for name, ours, theirs, ratio in rows:
    print(f"  {name}: {ours} against {theirs} ({ratio:.2f}x)")
if not env["TB_MARKDOWN"]:
    raise SystemExit(0)
lines = [
    "## two_builds",
    "",
    "This build's crash lab against another build of nvj (the peer), their rounds alternated in one run:"
    f" the fast path on one recording of `nvj writers` (16 tasks x 16 chunks of 64 KiB, fsync after each;"
    f" {ours_states[0]} unique states, `nvj crash check --verify none --max-states 0`) and `nvj crash explore"
    f" --shard 0/6` ({ours_outcome[0]} workloads of seq-1 and {ours_outcome[1]} findings for both builds;"
    f" {low} to {high} states a run, which the kernel's timing varies). Medians of each build's rounds.",
    "",
    f"- Command: `{env['TB_COMMAND']}`",
    f"- Date: {env['TB_DATE']}",
    f"- Git commit: {env['TB_GIT']}",
    f"- Peer: {env['TB_PEER']}",
    "",
    "| figure | this build | peer | this/peer |",
    "|---|---:|---:|---:|",
] + [f"| {name} | {ours} | {theirs} | {ratio:.2f}x |" for name, ours, theirs, ratio in rows]
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "two_builds", env["TB_MARKDOWN"]],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
