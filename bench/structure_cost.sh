#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# structure_cost.sh: what e2fsck on every state's structure costs the crash
# lab (nvj crash check --structure every, the default, against --structure
# none, the facts alone, in the same run), on ext4 on the default layout,
# this host's kernel:
#   - explore: every seq-1 workload (or those of --ops), each run twice;
#   - writers: nvj writers --tasks 16 --dirs 4 --chunks 64 --chunk-size 64K
#     --fsync each (the recording bench/crash_check.sh checks), every unique
#     state;
#   - mixed-nobarrier: bench/lib/mixed_workload.py (4 processes of 300
#     random operations) under nobarrier, --max-states states of it.
# For each: the wall time of both, how many recovered metadata images e2fsck
# checked for how many states, and the states whose damage only e2fsck saw.
# Needs root (loop devices, mounts).
#
# Usage: bench/structure_cost.sh [--nvj PATH] [--ops LIST] [--states N] [--markdown FILE]
#
# With --markdown the working tree must be clean: the section names the
# commit it was built from.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
ops=""
states=20000
markdown=""
bench_option --nvj nvj text
bench_option --ops ops text
bench_option --states states count
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash run and explore attach loop devices and mount)"
[[ -z $markdown ]] || bench_require_clean_tree
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs python3
tmp=$(mktemp -d -t nvj-structure-cost-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# timed NAME COMMAND...: runs it, its wall seconds to $tmp/NAME.time, its output to $tmp/NAME.log; exit 0 or 1.
timed() {
  local name=$1 status=0
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$tmp/$name.log" 2>&1 || status=$?
  t1=$(date +%s.%N)
  [[ $status == 0 || $status == 1 ]] || { tail -20 "$tmp/$name.log" >&2; bench_fail "$name: exit $status"; }
  echo "$t1 - $t0" | bc >"$tmp/$name.time"
  echo "   $name: $(cat "$tmp/$name.time") s"
}

explore=(crash explore)
[[ -z $ops ]] || explore+=(--ops "$ops")
for s in none every; do
  timed "explore-$s" "$nvj" "${explore[@]}" --structure "$s" --out "$tmp/explore-$s"
done

echo "== recording writers"
"$nvj" crash record --out "$tmp/writers" -- "$nvj" writers --tasks 16 --dirs 4 --chunks 64 --chunk-size 64K --fsync each w \
  >"$tmp/writers.record.log" 2>&1 || { cat "$tmp/writers.record.log"; bench_fail "recording writers failed"; }
for s in none every; do
  timed "writers-$s" "$nvj" crash check "$tmp/writers/recording.nvjrec" --verify none --max-states 0 --structure "$s" \
    --out "$tmp/writers-$s"
done

echo "== recording mixed-nobarrier"
"$nvj" crash record --out "$tmp/mixed" --mount-options nobarrier -- \
  python3 "$script_dir/lib/mixed_workload.py" --procs 4 --ops 300 --seed 1 . \
  >"$tmp/mixed.record.log" 2>&1 || { cat "$tmp/mixed.record.log"; bench_fail "recording mixed-nobarrier failed"; }
for s in none every; do
  timed "mixed-$s" "$nvj" crash check "$tmp/mixed/recording.nvjrec" --mount-options nobarrier --verify none \
    --max-states "$states" --structure "$s" --out "$tmp/mixed-$s"
done

SC_DIR=$tmp SC_MARKDOWN=$markdown SC_COMMAND=$command_line SC_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') \
SC_GIT=$(bench_git_rev) BENCH_DIR=$script_dir python3 - <<'PY'
import glob, json, os, re, subprocess
env = os.environ
d = env["SC_DIR"]

def seconds(name):
    return float(open(f"{d}/{name}.time").read())

def results(folder):
    """The check results under `folder`: one results.json, or an exploration's."""
    if os.path.exists(f"{folder}/results.json"):
        return [json.load(open(f"{folder}/results.json"))]
    return [json.load(open(p)) for p in sorted(glob.glob(f"{folder}/workloads/*/results.json"))]

def structure(name):
    """The e2fsck runs and the states they judged, from the checks' output."""
    logs = [f"{d}/{name}.log"] + sorted(glob.glob(f"{d}/{name}/workloads/*/check.log"))
    images = judged = 0
    for log in logs:
        for m in re.finditer(r"^structure \(e2fsck -fn on each recovered metadata image\): (\d+) images for (\d+) states$",
                             open(log).read(), re.M):
            images, judged = images + int(m[1]), judged + int(m[2])
    return images, judged

rows = []
for name, what in [("explore", "seq-1 exploration"), ("writers", "writers, every state"),
                   ("mixed", "mixed-nobarrier, a sample")]:
    # Each exploration records its workloads anew: its states are its own.
    none, every = results(f"{d}/{name}-none"), results(f"{d}/{name}-every")
    states_none = sum(len(r["states"]) for r in none)
    states = sum(len(r["states"]) for r in every)
    images, judged = structure(f"{name}-every")
    damaged = sum(s["verdict"] == "unreadable" and s.get("error", "").startswith("e2fsck -fn")
                  for r in every for s in r["states"])
    t0, t1 = seconds(f"{name}-none"), seconds(f"{name}-every")
    rows.append((what, states_none, states, t0, t1, images, judged, damaged))
for r in rows:
    print(f"{r[0]}: facts alone {r[1]} states in {r[3]:.1f} s, with e2fsck {r[2]} states in {r[4]:.1f} s "
          f"({r[4] / r[3]:.2f}x); {r[5]} images for {r[6]} states; {r[7]} damaged")
if not env["SC_MARKDOWN"]:
    raise SystemExit(0)
lines = [
    "## structure_cost",
    "",
    "What e2fsck on every state's structure costs (`--structure every`, the default, against `--structure none`,"
    " the facts alone, in the same run): ext4 on the default layout, this host's kernel. The seq-1 exploration runs"
    " every workload twice (wall time of the whole exploration; each run records its workloads anew, so its states"
    " are its own); `writers` is bench/crash_check.sh's recording"
    " (`nvj writers --tasks 16 --dirs 4 --chunks 64 --chunk-size 64K --fsync each`), every unique state; `mixed` is"
    " bench/lib/mixed_workload.py (4 processes of 300 random operations) under nobarrier, a sample of its states."
    " e2fsck runs once per recovered metadata image (crashlab/states/metadata_key.h); the states sharing one share its verdict.",
    "",
    f"- Command: `{env['SC_COMMAND']}`",
    f"- Date: {env['SC_DATE']}",
    f"- Git commit: {env['SC_GIT']}",
    "",
    "| recording | facts alone: states, s | with e2fsck: states, s | cost | e2fsck images | states they judged | damage only e2fsck saw |",
    "|---|---:|---:|---:|---:|---:|---:|",
] + [f"| {r[0]} | {r[1]}, {r[3]:.1f} | {r[2]}, {r[4]:.1f} | {r[4] / r[3]:.2f}x | {r[5]} | {r[6]} | {r[7]} |" for r in rows]
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "structure_cost", env["SC_MARKDOWN"]],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
