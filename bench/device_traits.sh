#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# device_traits.sh: the classic experiments with the devices telling the
# kernel what they model (after) against the same experiments built from the
# commit before they did (before), where every export said it was a
# non-rotating disk with a write cache and trim (the loop devices nvj attach
# made read rotational 0, scheduler none, write back, discard on). Both
# builds come from git worktrees with the same flags, and each experiment
# runs both ways back to back, the order alternating from one experiment to
# the next. What changed: the disk model rotates (the kernel gives it
# mq-deadline, btrfs leaves its ssd mode off), takes no discards, and the
# NVRAM journal is write-through (the kernel sends it no flush or FUA).
#
# Usage: bench/device_traits.sh [--before REV] [--full LIST] [--quick LIST] [--out DIR] [--section NAME] [--markdown FILE]
#   --before REV     the commit "before" is built from (default c5c97db, the
#                    last one before the devices said what they model)
#   --full LIST      experiments run in full (default chinner2012,phillips2014,enospc2015)
#   --quick LIST     experiments run with --quick (default wheeler2007,morton2001);
#                    "none" for none (also for --full)
#   --out DIR        keep every run's output folder here (default: a
#                    temporary folder, removed)
#   --section NAME   the section's name (default device_traits)
#   --markdown FILE  write the section "## NAME" into FILE (needs a clean
#                    working tree)
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"
source "$(dirname "$0")/lib/arms.sh"

before_rev=c5c97db
full=chinner2012,phillips2014,enospc2015
quick=wheeler2007,morton2001
out=""
section=device_traits
markdown=""
bench_option --before before_rev text
bench_option --full full text
bench_option --quick quick text
bench_option --out out text
bench_option --section section text
bench_option --markdown markdown text
bench_parse "$@"
[[ $full != none ]] || full=""
[[ $quick != none ]] || quick=""
bench_require git cmake ninja python3 nbdkit nbdfuse fs_mark mkfs.xfs mkfs.btrfs
[[ $(id -u) = 0 ]] || bench_fail "needs root (the experiments attach block devices and mount them)"
[[ -z $markdown ]] || bench_require_clean_tree

tmp=$(mktemp -d "${TMPDIR:-/tmp}/device_traits.XXXXXX")
cleanup() { bench_arm_cleanup "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
[[ -n $out ]] || out=$tmp/out
mkdir -p "$out"

after_rev=$(git -C "$repo_dir" rev-parse --short HEAD)
bench_arm_build "$tmp" before "$before_rev"
bench_arm_build "$tmp" after "$after_rev"

# run ARM NAME [--quick]: one experiment with one build, its output in OUT/ARM/NAME.
run() {
  local arm=$1 name=$2 start
  shift 2
  rm -rf "$out/$arm/$name"
  mkdir -p "$out/$arm"
  echo "device_traits: $name $* ($arm)"
  start=$(date +%s)
  "$tmp/$arm/tools/nvj/nvj" experiment "$name" "$@" --out "$out/$arm/$name" >"$out/$arm/$name.log" 2>&1 ||
    { tail -n 30 "$out/$arm/$name.log"; bench_fail "$name ($arm) failed"; }
  echo "$(($(date +%s) - start))" >"$out/$arm/$name.seconds"
}
turn=0
plan=()
IFS=, read -ra names <<<"$full"
for n in "${names[@]}"; do [[ -z $n ]] || plan+=("$n:full"); done
IFS=, read -ra names <<<"$quick"
for n in "${names[@]}"; do [[ -z $n ]] || plan+=("$n:quick"); done
for item in "${plan[@]}"; do
  name=${item%%:*}
  args=()
  [[ ${item#*:} = full ]] || args=(--quick)
  if ((turn % 2 == 0)); then arms=(before after); else arms=(after before); fi
  for arm in "${arms[@]}"; do run "$arm" "$name" "${args[@]}"; done
  turn=$((turn + 1))
done

# Both builds come from worktrees of their commits: what the main tree holds
# by the end is no part of them.
DT_OUT=$out DT_PLAN="${plan[*]}" DT_BEFORE=$before_rev DT_GIT=$after_rev DT_COMMAND=$command_line \
  DT_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') DT_MARKDOWN=$markdown DT_SECTION=$section BENCH_DIR=$script_dir python3 - <<'PY'
import os, re, subprocess, sys

env = os.environ
out = env["DT_OUT"]


def first_table(path):
    """The table in the seed's shape: the first Markdown table of table.md."""
    lines, seen = [], False
    for line in open(path):
        if line.startswith("|"):
            seen = True
            lines.append(line.rstrip("\n"))
        elif seen:
            break
    return lines


body = [
    f"## {env['DT_SECTION']}",
    "",
    "The classic experiments with the devices telling the kernel what they model (*after*: the disk model "
    "rotational with mq-deadline and no discard, the NVRAM journal write-through) against the same experiments "
    f"built from {env['DT_BEFORE']} (*before*: every export a non-rotating disk with a write cache and trim; "
    "the loop devices rotational 0, scheduler none, write back, discard on). Each experiment ran both ways back to "
    "back on this machine (2 vCPUs), the order alternating; the tables are each experiment's own (table.md), "
    "before, then after.",
    "",
    f"- Date: {env['DT_DATE']}",
    f"- Git commit (after): {env['DT_GIT']}; before: {env['DT_BEFORE']}",
    f"- Command: `{env['DT_COMMAND']}`",
    "",
]
for item in env["DT_PLAN"].split():
    name, how = item.split(":")
    secs = {arm: open(f"{out}/{arm}/{name}.seconds").read().strip() for arm in ("before", "after")}
    body.append(f"### {name} ({'full run' if how == 'full' else '--quick'}; {secs['before']} s before, "
                f"{secs['after']} s after)")
    body.append("")
    for arm in ("before", "after"):
        body.append(f"{arm.capitalize()}:")
        body.append("")
        body.extend(first_table(f"{out}/{arm}/{name}/table.md"))
        body.append("")
text = "\n".join(body).rstrip("\n") + "\n"
print(text)
if env["DT_MARKDOWN"]:
    subprocess.run([sys.executable, os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), env["DT_SECTION"],
                    env["DT_MARKDOWN"]], input=text, text=True, check=True)
PY
