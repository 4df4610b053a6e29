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
# Usage: bench/explore_fs.sh [--nvj PATH] [--shard I/N] [--fs LIST] [--markdown FILE]
#
# --shard takes a share of seq-1 (default 0/4: 94 workloads, every
# operation among them); --fs the filesystems (default ext4,xfs,btrfs).
# With --markdown the working tree must be clean: the section names the
# commit it was built from. Needs root.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
shard=0/4
filesystems=ext4,xfs,btrfs
markdown=""
bench_option --nvj nvj text
bench_option --shard shard text
bench_option --fs filesystems text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash explore attaches loop devices and mounts)"
[[ $shard =~ ^[0-9]+/[1-9][0-9]*$ ]] || bench_usage_error "--shard $shard: expected I/N"
[[ -z $markdown ]] || bench_require_clean_tree
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs xfs_repair:xfsprogs btrfs:btrfs-progs losetup:mount python3
tmp=$(mktemp -d /dev/shm/nvj-explore-fs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

IFS=, read -r -a fs_list <<<"$filesystems"
for fs in "${fs_list[@]}"; do
  case $fs in ext4 | xfs | btrfs) ;; *) bench_usage_error "--fs: '$fs' is not ext4, xfs or btrfs" ;; esac
  echo "explore_fs: $fs, seq-1 shard $shard, every unique state"
  status=0
  /usr/bin/time -f "%e %U %S" -o "$tmp/$fs.time" "$nvj" crash explore --fs "$fs" --shard "$shard" --max-states 0 \
    --keep-workloads failing --out "$tmp/$fs" >"$tmp/$fs.log" 2>&1 || status=$?
  [[ $status == 0 || $status == 1 ]] || { tail -20 "$tmp/$fs.log" >&2; bench_fail "nvj crash explore --fs $fs exited $status"; }
done

EF_DIR=$tmp EF_FS=$filesystems EF_SHARD=$shard EF_MARKDOWN=$markdown EF_COMMAND=$command_line \
EF_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') EF_GIT=$(bench_git_rev) EF_KERNEL=$(uname -r) BENCH_DIR=$script_dir \
python3 - <<'PY'
import json, os, subprocess
env = os.environ
d = env["EF_DIR"]
rows = []
for fs in env["EF_FS"].split(","):
    r = json.load(open(f"{d}/{fs}/explore.json"))
    wall, user, sys_ = map(float, open(f"{d}/{fs}.time").read().split()[-3:])
    w, states = r["explored"], r["states"]
    rows.append((fs, w, states, wall, w / wall, states / wall, states / (user + sys_), r["findings"], r["errors"]))
    print(f"explore_fs: {fs}: {w} workloads, {states} states in {wall:.1f} s: {w / wall:.2f} workloads/s, "
          f"{states / wall:.1f} states/s, {states / (user + sys_):.1f} per CPU second; {r['findings']} findings")
if not env["EF_MARKDOWN"]:
    raise SystemExit(0)
ext4 = next((row for row in rows if row[0] == "ext4"), None)
lines = [
    "## explore_fs",
    "",
    f"`nvj crash explore --shard {env['EF_SHARD']} --max-states 0` (seq-1, every unique crash state of each"
    " workload) on each filesystem, the same workloads, this host's kernel"
    f" ({env['EF_KERNEL']}): ext4 by the fast path (the kernel confirming the failing states), XFS and btrfs by"
    " the kernel alone, a mount and the filesystem's checker (xfs_repair -n, btrfs check --readonly) per state."
    " CPU seconds are nvj's and the processes it waits for (the checkers), not the server's.",
    "",
    f"- Command: `{env['EF_COMMAND']}`",
    f"- Date: {env['EF_DATE']}",
    f"- Git commit: {env['EF_GIT']}",
    "",
    "| filesystem | workloads | unique states | time | workloads/s | states/s | states per CPU second | findings | errors |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
] + [f"| {fs} | {w} | {s} | {t:.1f} s | {wps:.2f} | {sps:.1f} | {spc:.1f} | {f} | {e} |"
     for fs, w, s, t, wps, sps, spc, f, e in rows]
if ext4:
    lines += ["", "States per second against ext4's: " + ", ".join(
        f"{fs} {sps / ext4[5]:.3f}x" for fs, _, _, _, _, sps, _, _, _ in rows if fs != "ext4") + "."]
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "explore_fs", env["EF_MARKDOWN"]],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
