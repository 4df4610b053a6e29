#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# explore.sh: how fast the crash lab explores by itself (nvj crash explore,
# ext4 on the default layout, this host's kernel):
#   - every seq-1 workload (or those of --ops): workloads per second and
#     unique crash states checked per second (wall, and per CPU second of
#     nvj and the server together), and where the time goes by phase, as
#     explore.json counts it (restoring the base and starting the recording,
#     mount, the steps with their facts, unmount, the check of every state);
#   - the peer, on the same workloads' states: a state checked by a replay
#     of its own, the whole images copied (cp --sparse=always), loop
#     devices, a mount that replays the journal, every file read, unmount,
#     e2fsck -fn (bench/lib/image_peer.sh), on the first --peer-states
#     states of the workloads in order, their images written beforehand
#     (untimed): states per second, against the explorer's.
# Needs root (loop devices, mounts).
#
# Usage: bench/explore.sh [--nvj PATH] [--ops LIST] [--peer-states N] [--scratch DIR] [--markdown FILE]
#
# With --markdown the working tree must be clean: the section names the
# commit it was built from.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
ops=""
peer_states=150
scratch=/dev/shm
markdown=""
bench_option --nvj nvj text
bench_option --ops ops text
bench_option --peer-states peer_states count
bench_option --scratch scratch text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash explore and the peer attach loop devices and mount)"
[[ -d $scratch ]] || bench_usage_error "--scratch $scratch: no such folder"
[[ -z $markdown ]] || bench_require_clean_tree
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs losetup:mount python3 bc
tmp=$(mktemp -d "$scratch/nvj-explore-bench-XXXXXX")
source "$script_dir/lib/image_peer.sh"
peer_dir=$tmp
peer_mnt="$tmp/peer-mnt"
peer_times="$tmp/peer.times"
cleanup() {
  set +e
  image_peer_cleanup
  rm -rf "$tmp"
}
trap cleanup EXIT

args=(--out "$tmp/explore")
[[ -z $ops ]] || args+=(--ops "$ops")
echo "explore: nvj crash explore ${args[*]:2}"
status=0
/usr/bin/time -f "%e %U %S" -o "$tmp/explore.time" "$nvj" crash explore "${args[@]}" >"$tmp/explore.log" 2>&1 ||
  status=$?
[[ $status == 0 || $status == 1 ]] || { tail -20 "$tmp/explore.log" >&2; bench_fail "nvj crash explore exited $status"; }

echo "explore: the peer (a replay of its own per state, whole images) on the first $peer_states states"
: >"$peer_times"
python3 - "$tmp/explore/explore.json" "$peer_states" >"$tmp/peer.states" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
left = int(sys.argv[2])
for w in r["workloads"]:
    states = json.load(open(f"{sys.argv[1].rsplit('/', 1)[0]}/workloads/{w['ordinal']}/results.json"))["states"]
    for s in states[:left]:
        print(w["ordinal"], s["ordinal"])
    left -= min(left, len(states))
    if left == 0:
        break
PY
while read -r workload state; do
  rm -rf "$tmp/img"
  "$nvj" crash image "$tmp/explore/workloads/$workload/recording.nvjrec" --state "$state" --out "$tmp/img" >/dev/null
  image_peer_state "$tmp/img"
done <"$tmp/peer.states"
rm -rf "$tmp/img"

EX_DIR=$tmp EX_MARKDOWN=$markdown EX_COMMAND=$command_line EX_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') \
EX_GIT=$(bench_git_rev) EX_SCRATCH=$scratch BENCH_DIR=$script_dir python3 - <<'PY'
import json, os, subprocess
env = os.environ
d = env["EX_DIR"]
r = json.load(open(f"{d}/explore/explore.json"))
wall, user, sys_ = map(float, open(f"{d}/explore.time").read().split()[-3:])
w, states = r["explored"], r["states"]
phases = r["phases"]
total = sum(phases.values())
peer = [float(x) for x in open(f"{d}/peer.times").read().split()]
peer_rate = len(peer) / sum(peer)
ours = states / wall
print()
print(f"explore: {w} workloads ({r['bound']}), {states} states in {wall:.1f} s: {w / wall:.2f} workloads/s, "
      f"{ours:.0f} states/s, {states / (user + sys_):.0f} per CPU second of nvj; {r['findings']} findings")
for name, t in phases.items():
    print(f"  {100 * t / total:5.1f}%  {name}")
print(f"peer (a replay of its own per state): {peer_rate:.1f} states/s on {len(peer)} states; ours/peer {ours / peer_rate:.0f}x")
if not env["EX_MARKDOWN"]:
    raise SystemExit(0)
lines = [
    "## explore",
    "",
    f"`nvj crash explore` on ext4 (the default layout: journal on the NVRAM export; data on"
    f" `{' '.join(p for p in r['parameters'] if p.startswith('data-'))}`), this host's kernel: {w} workloads of {r['bound']}"
    + (f" (--ops {','.join(r['ops'])})" if r["ops"] else "")
    + f", one server and one attach for all, the base restored between them; every unique crash state of each"
    f" checked (the fast path; the kernel confirms the failing states; on ext4 a workload's check overlaps the"
    f" next workloads' runs, so the phases below add up to more than the wall time). The peer checks a state by a replay of"
    f" its own: both images copied whole (`cp --sparse=always`), loop devices, a mount (the kernel replays the"
    f" journal), every file read, unmount, `e2fsck -fn`, on the first {len(peer)} states of the same workloads"
    f" (their images written beforehand by `nvj crash image`, untimed; files in `{env['EX_SCRATCH']}`).",
    "",
    f"- Command: `{env['EX_COMMAND']}`",
    f"- Date: {env['EX_DATE']}",
    f"- Git commit: {env['EX_GIT']}",
    "",
    "| figure | measured |",
    "|---|---:|",
    f"| workloads per second (wall) | {w / wall:.2f} |",
    f"| unique crash states checked per second (wall) | {ours:.0f} |",
    f"| states per CPU second of nvj (the server's own CPU not counted) | {states / (user + sys_):.0f} |",
    f"| peer: a replay of its own per state, states per second | {peer_rate:.1f} |",
    f"| ours/peer, states per second | {ours / peer_rate:.0f}x |",
    f"| findings | {r['findings']} |",
    "",
    "Where the time goes (explore.json's phases, over every workload):",
    "",
    "| share | phase |",
    "|---:|---|",
] + [f"| {100 * t / total:.1f}% | {name} |" for name, t in phases.items()]
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "explore", env["EX_MARKDOWN"]],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
