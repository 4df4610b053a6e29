#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# crash_check.sh: how fast the crash lab checks crash states, on a recording
# of nvj writers writing 64 MiB (16 tasks x 64 chunks of 64 KiB, fsync after
# each) on the default layout (nvj crash run: ext4, journal on NVRAM, data on
# a disk with a write cache):
#   - the fast path (nvj crash check --verify none): states per second, and
#     per second of CPU (one core), median of rounds; where its time goes
#     by what the code does (perf's call graphs: the time spent inside each
#     phase's function, planning the states, building them, the journal's
#     replay, the orphan list, reading the filesystem and the facts back,
#     writing the results);
#   - the ground truth (--verify all, a shard of about --gt-states states):
#     states per second, against a peer that copies the whole images per
#     state (cp --sparse=always of both), then the same loop devices,
#     mount, reading every file back, unmount and e2fsck -fn;
#   - sharding: 2 shards side by side against 1, states per second.
# Targets: fast path >= 1000 states/s per core; ground truth >= 20 states/s
# per core; 2 shards >= 1.7x one. Needs root (loop devices, mounts).
#
# Usage: bench/crash_check.sh [--nvj PATH] [--rounds N] [--gt-states N]
#                             [--batch N] [--scratch DIR] [--markdown FILE]
#
# The peer runs on every state the ground truth checked; their images are
# written --batch states at a time (nvj crash image, untimed), so that
# --scratch needs room for that many (about 70 MiB each). Every check takes
# every unique state (--max-states 0). With --markdown the working tree
# must be clean: the section names the commit it was built from.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
rounds=3
gt_states=150
batch=15
scratch=/dev/shm
markdown=""
bench_option --nvj nvj text
bench_option --rounds rounds count
bench_option --gt-states gt_states count
bench_option --batch batch count
bench_option --scratch scratch text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash run and the ground truth attach loop devices and mount)"
[[ -d $scratch ]] || bench_usage_error "--scratch $scratch: no such folder"
[[ -z $markdown ]] || bench_require_clean_tree
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require nbdkit nbdfuse:nbdfuse e2fsck:e2fsprogs losetup:mount python3
tmp=$(mktemp -d "$scratch/nvj-crash-bench-XXXXXX")
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

echo "crash_check: recording nvj writers, 64 MiB with an fsync after every 64 KiB"
"$nvj" crash run --out "$tmp/run" --verify none -- \
  "$nvj" writers --tasks 16 --dirs 4 --chunks 64 --chunk-size 64K --fsync each w >"$tmp/run.log" 2>&1 ||
  { cat "$tmp/run.log" >&2; bench_fail "nvj crash run failed"; }
rec="$tmp/run/recording.nvjrec"

# timed LOG CMD...: runs CMD, its output in LOG, and appends "wall user sys".
timed() {
  local log=$1; shift
  local t0 t1 status=0
  /usr/bin/time -f "%e %U %S" -o "$log.time" "$@" >"$log" 2>&1 || status=$?
  [[ $status == 0 || $status == 1 ]] || { cat "$log" >&2; bench_fail "$* exited $status"; }
}

echo "crash_check: fast path, $rounds rounds"
for r in $(seq 1 "$rounds"); do timed "$tmp/fast$r" "$nvj" crash check "$rec" --max-states 0 --verify none; done

echo "crash_check: where a state's time goes (perf, call graphs)"
perf_ok=0
if command -v perf >/dev/null &&
  perf record -q -F 499 --call-graph dwarf,16384 -o "$tmp/perf.data" "$nvj" crash check "$rec" --max-states 0 \
    --verify none >/dev/null 2>&1; then
  perf report -i "$tmp/perf.data" --children --sort symbol --stdio --no-demangle -g none 2>/dev/null \
    >"$tmp/perf.txt" && perf_ok=1
fi

echo "crash_check: sharding, $rounds rounds of 2 shards side by side"
for r in $(seq 1 "$rounds"); do
  start=$(date +%s.%N)
  "$nvj" crash check "$rec" --max-states 0 --verify none --shard 0/2 >"$tmp/s0.$r" 2>&1 &
  p0=$!
  "$nvj" crash check "$rec" --max-states 0 --verify none --shard 1/2 >"$tmp/s1.$r" 2>&1 &
  p1=$!
  wait "$p0" || true
  wait "$p1" || true
  echo "$(date +%s.%N) - $start" | bc >"$tmp/shard$r.wall"
done

unique=$(awk '/^total/ { print $3 }' "$tmp/fast1")
shards=$(( unique / gt_states > 1 ? unique / gt_states : 1 ))
echo "crash_check: ground truth on shard 0 of $shards (about $gt_states states)"
timed "$tmp/gt" "$nvj" crash check "$rec" --max-states 0 --verify all --shard "0/$shards" --scratch "$tmp" --out "$tmp/gt-out"

echo "crash_check: the peer (a full image copy per state) on the same states"
python3 -c 'import json,sys; print("\n".join(str(s["ordinal"]) for s in json.load(open(sys.argv[1]))["states"]))' \
  "$tmp/gt-out/results.json" >"$tmp/peer.ordinals"
: >"$tmp/peer.times"
mapfile -t ordinals <"$tmp/peer.ordinals"
for ((i = 0; i < ${#ordinals[@]}; i += batch)); do
  part=("${ordinals[@]:i:batch}")
  args=()
  for n in "${part[@]}"; do args+=(--state "$n"); done
  rm -rf "$tmp/img"
  # Untimed: the peer's own replay of the log up to each state is not counted either.
  "$nvj" crash image "$rec" "${args[@]}" --out "$tmp/img" >/dev/null
  for n in "${part[@]}"; do
    if [[ ${#part[@]} -gt 1 ]]; then image_peer_state "$tmp/img/$n"; else image_peer_state "$tmp/img"; fi
  done
done
rm -rf "$tmp/img"

CC_DIR=$tmp CC_ROUNDS=$rounds CC_PERF=$perf_ok CC_MARKDOWN=$markdown CC_COMMAND=$command_line \
CC_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') CC_GIT=$(bench_git_rev) CC_REC_BYTES=$(stat -c %s "$rec") \
CC_SCRATCH=$scratch BENCH_DIR=$script_dir python3 - <<'PY'
import os, re, statistics, subprocess
env = os.environ
d = env["CC_DIR"]
rounds = int(env["CC_ROUNDS"])
def checked(path):
    m = re.search(r"^(\d+) states checked in ([\d.]+) s", open(path).read(), re.M)
    return int(m.group(1))
def times(path):
    wall, user, sys_ = map(float, open(path + ".time").read().split()[-3:])
    return wall, user + sys_
fast = []
for r in range(1, rounds + 1):
    n = checked(f"{d}/fast{r}")
    wall, cpu = times(f"{d}/fast{r}")
    fast.append((n, wall, cpu))
states = fast[0][0]
fast_wall = statistics.median(n / w for n, w, c in fast)
fast_cpu = statistics.median(n / c for n, w, c in fast)
one_wall = statistics.median(w for n, w, c in fast)
two_wall = [float(open(f"{d}/shard{r}.wall").read()) for r in range(1, rounds + 1)]
speedup = one_wall / statistics.median(two_wall)
gt_n = checked(f"{d}/gt")
gt_wall, gt_cpu = times(f"{d}/gt")
gt_rate = gt_n / gt_wall
gt_disagree = re.search(r"(\d+) disagreeing", open(f"{d}/gt").read())
peer = [float(x) for x in open(f"{d}/peer.times").read().split()]
peer_rate = len(peer) / sum(peer)
assert len(peer) == gt_n, f"the peer checked {len(peer)} states, the ground truth {gt_n}"
# The time inside each phase's function (perf's "children" share: the
# function and all it calls), by what the code does. The phases do not
# nest, so their shares add up; what is left is the rest (the walk itself,
# the session's bookkeeping, start-up).
phases = [("planning: enumerating the states twice, the sample", r"crashlab::CrashChecker::CrashChecker"),
          ("building each state (its kept changes put over the durable ones)",
           r"crashlab::CrashImage::set_state|crashlab::CrashImage::advance|crashlab::state_of"),
          ("the journal's replay into the state (or the memo's copy of it)", r"crashlab::ReplayMemo::replay"),
          ("the orphan list", r"fscore::ext4::read_orphans"),
          ("reading the filesystem and the facts back (checksums, files' CRCs)",
           r"crashlab::FactChecker::check|fscore::ext4::TreeReader::TreeReader"),
          ("results.json, the report", r"nvj::cli::results_json|nvj::cli::state_json|nvj::cli::write_crash_report|nvj::to_json_text")]
shares = {}
if env["CC_PERF"] == "1":
    inside = {}
    for line in open(f"{d}/perf.txt"):
        # "children%  self%  [.] symbol" (--sort symbol: no command or object column)
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+(?:\S+\s+)*?\[\.\]\s+(\S+)", line)
        if m:
            inside[m.group(3)] = float(m.group(1))
    demangled = dict(zip(inside, subprocess.run(["c++filt"], input="\n".join(inside), capture_output=True,
                                                text=True).stdout.splitlines()))
    for what, rx in phases:
        # A function's own entry, not its clones' or lambdas' (their time is inside it already).
        shares[what] = sum(p for sym, p in inside.items()
                           if re.fullmatch(rf"(?:{rx})\(.*\)(?: const)?", demangled.get(sym, sym)))
    shares["the rest: the walk, the session, start-up"] = max(0.0, 100.0 - sum(shares.values()))
ok_fast, ok_gt, ok_shard = fast_cpu >= 1000, gt_rate >= 20, speedup >= 1.7
print()
print(f"fast path: {states} states, {fast_wall:.0f} states/s, {fast_cpu:.0f} per CPU second ({'PASS' if ok_fast else 'FAIL'}, target 1000)")
for g, p in sorted(shares.items(), key=lambda x: -x[1]):
    print(f"  {p:5.1f}%  {g}")
print(f"ground truth: {gt_n} states in {gt_wall:.1f} s, {gt_rate:.1f} states/s ({'PASS' if ok_gt else 'FAIL'}, target 20); "
      f"peer (a full image copy per state) on the same states: {peer_rate:.1f} states/s; ours/peer {gt_rate / peer_rate:.2f}x")
print(f"sharding: 1 shard {one_wall:.2f} s, 2 side by side {statistics.median(two_wall):.2f} s: {speedup:.2f}x ({'PASS' if ok_shard else 'FAIL'}, target 1.7)")
path = env["CC_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## crash_check",
    "",
    "The crash lab's checks on a recording of `nvj writers --tasks 16 --dirs 4 --chunks 64 --chunk-size 64K --fsync each`"
    " (64 MiB) made by `nvj crash run` on the default layout (ext4, journal on the NVRAM export, data on the hdd"
    f" model with its write cache): {env['CC_REC_BYTES']} bytes of recording, {states} unique crash states (default"
    " strategies). The fast path is `nvj crash check --verify none`, its states per CPU second the per-core figure;"
    " the ground truth is `--verify all` on a shard (a kernel mount, the facts read back, `e2fsck -fn`, files in"
    f" `{env['CC_SCRATCH']}`); its peer, on the same states, copies the whole images per state (`cp"
    " --sparse=always` of both) and then does the same: loop devices, mount, every file read, unmount and"
    " `e2fsck -fn` (the state's images themselves written beforehand, untimed). Every check takes every unique"
    " state (`--max-states 0`).",
    "",
    f"- Command: `{env['CC_COMMAND']}`",
    f"- Date: {env['CC_DATE']}",
    f"- Git commit: {env['CC_GIT']}",
    "",
    "| figure | measured | target | verdict |",
    "|---|---:|---:|---|",
    f"| fast path, states per CPU second (median of {rounds}) | {fast_cpu:.0f} | >= 1000 | {'PASS' if ok_fast else 'FAIL'} |",
    f"| fast path, states per second (wall) | {fast_wall:.0f} | | |",
    f"| ground truth, states per second ({gt_n} states, one process) | {gt_rate:.1f} | >= 20 | {'PASS' if ok_gt else 'FAIL'} |",
    f"| peer: a full image copy per state, states per second (the same {len(peer)} states) | {peer_rate:.1f} | | ours/peer {gt_rate / peer_rate:.2f}x |",
    f"| 2 shards side by side against 1 (median of {rounds}) | {speedup:.2f}x | >= 1.7x | {'PASS' if ok_shard else 'FAIL'} |",
    "",
    f"The ground truth and the fast path disagreed on {gt_disagree.group(1) if gt_disagree else '?'} of the {gt_n} states.",
]
if shares:
    lines += ["", "Where the fast path's time goes, by what the code does (perf with call graphs: the share of"
              " samples inside each phase's function, all it calls included):", "",
              "| share | what |", "|---:|---|"]
    lines += [f"| {p:.1f}% | {g} |" for g, p in sorted(shares.items(), key=lambda x: -x[1])]
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "crash_check", path],
               input=section, text=True, check=True)
PY
