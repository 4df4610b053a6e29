#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# explore_fs.sh: the explorer with every unique crash state checked on each
# filesystem, side by side (nvj crash explore --max-states 0, this host's
# kernel, the same workloads on each): ext4 by the fast path (the kernel
# confirming the failing states), XFS and btrfs by the kernel, a mount and
# the filesystem's checker per state. Workloads per second, unique states
# checked per second (wall) and per CPU second (nvj and the processes it
# waits for: the checkers, not the server), and findings, for each.
#
# Usage: bench/explore_fs.sh [--nvj PATH] [--shard I/N] [--fs LIST] [--before REV]
#                            [--section NAME] [--markdown FILE]
#
# --shard takes a share of seq-1 (default 0/1: all 376 workloads; 0/4 is 94
# of them, every operation among them); --fs the filesystems (default
# ext4,xfs,btrfs). --before REV builds REV and HEAD alike (Release, unity,
# each in a worktree of its own) and runs each filesystem with both, REV
# first, in the same run: the section then has a table for each and their
# ratios (--nvj is not used). --section names the section (default
# explore_fs). With --markdown the working tree must be clean: the section
# names the commit it was built from. Needs root.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"
source "$(dirname "$0")/lib/arms.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
shard=0/1
filesystems=ext4,xfs,btrfs
before_rev=""
section=explore_fs
markdown=""
bench_option --nvj nvj text
bench_option --shard shard text
bench_option --fs filesystems text
bench_option --before before_rev text
bench_option --section section text
bench_option --markdown markdown text
bench_parse "$@"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash explore attaches loop devices and mounts)"
[[ $shard =~ ^[0-9]+/[1-9][0-9]*$ ]] || bench_usage_error "--shard $shard: expected I/N"
[[ -z $markdown ]] || bench_require_clean_tree
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs xfs_repair:xfsprogs btrfs:btrfs-progs losetup:mount python3
tmp=$(mktemp -d /dev/shm/nvj-explore-fs-XXXXXX)
cleanup() { bench_arm_cleanup "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

IFS=, read -r -a fs_list <<<"$filesystems"
for fs in "${fs_list[@]}"; do
  case $fs in ext4 | xfs | btrfs) ;; *) bench_usage_error "--fs: '$fs' is not ext4, xfs or btrfs" ;; esac
done

arms=(after)
if [[ -n $before_rev ]]; then
  arms=(before after)
  bench_arm_build "$tmp" before "$before_rev"
  bench_arm_build "$tmp" after "$(git -C "$repo_dir" rev-parse --short HEAD)"
  before_rev=$(git -C "$repo_dir" rev-parse --short "$before_rev")
else
  [[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
  mkdir -p "$tmp/after/tools/nvj"
  ln -s "$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")" "$tmp/after/tools/nvj/nvj"
fi

for fs in "${fs_list[@]}"; do
  for arm in "${arms[@]}"; do
    echo "explore_fs: $fs, seq-1 shard $shard, every unique state ($arm)"
    status=0
    /usr/bin/time -f "%e %U %S" -o "$tmp/$arm-$fs.time" "$tmp/$arm/tools/nvj/nvj" crash explore --fs "$fs" \
      --shard "$shard" --max-states 0 --keep-workloads failing --out "$tmp/$arm-$fs" >"$tmp/$arm-$fs.log" 2>&1 ||
      status=$?
    [[ $status == 0 || $status == 1 ]] ||
      { tail -20 "$tmp/$arm-$fs.log" >&2; bench_fail "nvj crash explore --fs $fs ($arm) exited $status"; }
  done
done

EF_DIR=$tmp EF_FS=$filesystems EF_SHARD=$shard EF_ARMS="${arms[*]}" EF_BEFORE=$before_rev EF_SECTION=$section \
EF_MARKDOWN=$markdown EF_COMMAND=$command_line EF_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') EF_GIT=$(bench_git_rev) \
EF_KERNEL=$(uname -r) BENCH_DIR=$script_dir \
python3 - <<'PY'
import json, os, subprocess
env = os.environ
d = env["EF_DIR"]
arms = env["EF_ARMS"].split()
rows = {}  # arm -> [(fs, workloads, states, wall, workloads/s, states/s, states per CPU s, findings, errors)]
for arm in arms:
    rows[arm] = []
    for fs in env["EF_FS"].split(","):
        r = json.load(open(f"{d}/{arm}-{fs}/explore.json"))
        wall, user, sys_ = map(float, open(f"{d}/{arm}-{fs}.time").read().split()[-3:])
        w, states = r["explored"], r["states"]
        rows[arm].append((fs, w, states, wall, w / wall, states / wall, states / (user + sys_), r["findings"],
                          r["errors"]))
        print(f"explore_fs: {fs} ({arm}): {w} workloads, {states} states in {wall:.1f} s: {w / wall:.2f} "
              f"workloads/s, {states / wall:.1f} states/s, {states / (user + sys_):.1f} per CPU second; "
              f"{r['findings']} findings")
if not env["EF_MARKDOWN"]:
    raise SystemExit(0)


def table(arm_rows):
    out = ["| filesystem | workloads | unique states | time | workloads/s | states/s | states per CPU second | findings "
           "| errors |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {fs} | {w} | {s} | {t:.1f} s | {wps:.2f} | {sps:.1f} | {spc:.1f} | {f} | {e} |"
            for fs, w, s, t, wps, sps, spc, f, e in arm_rows]
    ext4 = next((row for row in arm_rows if row[0] == "ext4"), None)
    if ext4:
        out += ["", "States per second against ext4's: " + ", ".join(
            f"{fs} {sps / ext4[5]:.3f}x" for fs, _, _, _, _, sps, _, _, _ in arm_rows if fs != "ext4") + "."]
    return out


before = env["EF_BEFORE"]
lines = [
    f"## {env['EF_SECTION']}",
    "",
    f"`nvj crash explore --shard {env['EF_SHARD']} --max-states 0` (seq-1, every unique crash state of each"
    " workload) on each filesystem, the same workloads, this host's kernel"
    f" ({env['EF_KERNEL']}): ext4 by the fast path (the kernel confirming the failing states), XFS and btrfs by"
    " the kernel alone, a mount and the filesystem's checker (xfs_repair -n, btrfs check --readonly) per state."
    " CPU seconds are nvj's and the processes it waits for (the checkers), not the server's."
    + (f" Before: the build of {before}; after: the build of this commit; both Release unity builds made by the"
       " script, each filesystem run with before, then after, in the same run. Each run records its workloads"
       " anew, so their unique states differ a little." if before else ""),
    "",
    f"- Command: `{env['EF_COMMAND']}`",
    f"- Date: {env['EF_DATE']}",
    f"- Git commit: {env['EF_GIT']}",
    "",
]
if before:
    lines += [f"Before ({before}):", ""] + table(rows["before"]) + ["", "After:", ""] + table(rows["after"])
    lines += ["", "| filesystem | states/s, after/before | states per CPU second, after/before |", "|---|---:|---:|"]
    for b, a in zip(rows["before"], rows["after"]):
        lines.append(f"| {a[0]} | {a[5] / b[5]:.2f}x | {a[6] / b[6]:.2f}x |")
else:
    lines += table(rows["after"])
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), env["EF_SECTION"], env["EF_MARKDOWN"]],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
