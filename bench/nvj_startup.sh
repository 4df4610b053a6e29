#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj_startup.sh: how long `nvj --version` and `nvj COMMAND --help` take, this
# build's nvj against the nvj of another commit (the peer: by default the one
# before nvj's command line moved to CLI11), built the same way, in the same
# run.
#
# Usage: bench/nvj_startup.sh [--nvj PATH] [--baseline REV] [--baseline-nvj PATH]
#                             [--calls N] [--rounds N] [--markdown FILE]
#
# The baseline is built from REV with `git worktree` and CMake (RelWithDebInfo,
# only the nvj target) in a temporary folder, or taken as built with
# --baseline-nvj PATH. Each round makes N calls of each program, alternating
# between them; it reports medians of wall and CPU time per call, their
# paired ratio, and the instructions of one call of each (callgrind).
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
baseline=5680099
calls=200
rounds=5
markdown=""
baseline_nvj=""

bench_option --nvj nvj text
bench_option --baseline baseline text
bench_option --baseline-nvj baseline_nvj text
bench_option --calls calls count
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build nvj)"
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require git cmake ninja python3 valgrind

tmp=$(mktemp -d)
cleanup() {
  git -C "$repo_dir" worktree remove --force "$tmp/src" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

if [[ -n $baseline_nvj ]]; then
  [[ -x $baseline_nvj ]] || bench_fail "no program at --baseline-nvj $baseline_nvj"
  old=$baseline_nvj
else
  echo "nvj_startup: building nvj at $baseline"
  git -C "$repo_dir" worktree add --detach -q "$tmp/src" "$baseline"
  cmake -S "$tmp/src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVJ_BUILD_TESTS=OFF >/dev/null
  nice ninja -C "$tmp/build" nvj >"$tmp/build.log" 2>&1 || { tail -n 20 "$tmp/build.log"; bench_fail "the baseline did not build"; }
  old=$tmp/build/tools/nvj/nvj
fi

# Calls alternate old, new, old, new, ... so the machine's drift falls on
# both alike; per call: wall time and the CPU time the kernel charged the
# child (user + system, from wait4), whose median waiting cannot inflate.
# Then each once under callgrind: instructions from exec to exit, the
# dynamic loader included, a count noise does not move.
NVJ_STARTUP_NEW=$nvj NVJ_STARTUP_OLD=$old NVJ_STARTUP_CALLS=$calls NVJ_STARTUP_ROUNDS=$rounds \
NVJ_STARTUP_MARKDOWN=$markdown NVJ_STARTUP_COMMAND=$command_line \
NVJ_STARTUP_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') NVJ_STARTUP_GIT=$(bench_git_rev) \
NVJ_STARTUP_BASELINE=$baseline NVJ_STARTUP_REPO=$repo_dir \
NVJ_STARTUP_LOAD="$(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)" \
BENCH_DIR=$script_dir python3 - <<'EOF2'
import os, re, statistics, subprocess, time

env = os.environ
new, old = env["NVJ_STARTUP_NEW"], env["NVJ_STARTUP_OLD"]
calls, rounds = int(env["NVJ_STARTUP_CALLS"]), int(env["NVJ_STARTUP_ROUNDS"])
devnull = os.open(os.devnull, os.O_WRONLY)

def one(program, args):
    start = time.perf_counter_ns()
    pid = os.fork()
    if pid == 0:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(program, [program] + args)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter_ns() - start) / 1e3
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{program} {' '.join(args)} exited {os.waitstatus_to_exitcode(status)}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e6

def instructions(program, args):
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", program] + args,
                         capture_output=True, text=True).stderr
    return int(re.search(r"refs:\s+([\d,]+)", out).group(1).replace(",", ""))

rows = []
for args in (["--version"], ["bench", "--help"]):
    walls = {"new": [], "old": []}
    cpus = {"new": [], "old": []}
    ratios = []
    for r in range(rounds):
        w = {"new": [], "old": []}
        c = {"new": [], "old": []}
        for i in range(calls):
            for who in (("old", "new") if i % 2 == 0 else ("new", "old")):
                wall, cpu = one(new if who == "new" else old, args)
                w[who].append(wall)
                c[who].append(cpu)
        for who in w:
            walls[who].append(statistics.median(w[who]))
            cpus[who].append(statistics.median(c[who]))
        ratios.append(walls["new"][-1] / walls["old"][-1])
        print(f"  nvj {' '.join(args):<12} round {r + 1}: wall {walls['new'][-1]:.0f} us against "
              f"{walls['old'][-1]:.0f} (ratio {ratios[-1]:.3f})")
    ins = {who: instructions(new if who == "new" else old, args) for who in ("new", "old")}
    rows.append((" ".join(args), statistics.median(walls["new"]), statistics.median(walls["old"]),
                 statistics.median(ratios), ratios, statistics.median(cpus["new"]), statistics.median(cpus["old"]),
                 ins["new"], ins["old"]))

for what, wn, wo, r, ratios, cn, co, inew, iold in rows:
    print(f"nvj {what}: wall {wn:.0f} us against {wo:.0f} (median paired ratio {r:.3f}); CPU {cn:.0f} us against "
          f"{co:.0f}; instructions {inew:,} against {iold:,} ({(inew / iold - 1) * 100:+.1f}%)")
path = env["NVJ_STARTUP_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## nvj_startup",
    "",
    "Start-up of nvj, this build against nvj built from the baseline commit the same way (RelWithDebInfo), in"
    " the same run: `nvj --version` and `nvj bench --help` (one command's options declared and its help"
    " formatted). Calls alternate between the two programs; per round the median per call of wall time and"
    " of the CPU time charged to the process (user + system); instructions from exec to exit (callgrind,"
    " the dynamic loader included).",
    "",
    f"- Command: `{env['NVJ_STARTUP_COMMAND']}`",
    f"- Date: {env['NVJ_STARTUP_DATE']}",
    f"- Git commit: {env['NVJ_STARTUP_GIT']}; baseline {env['NVJ_STARTUP_BASELINE']}",
    f"- nvj: `{os.path.relpath(new, env['NVJ_STARTUP_REPO'])}`",
    f"- {calls} calls per program per round, {rounds} rounds; load average {env['NVJ_STARTUP_LOAD']}",
    "",
    "| call | wall us, this / baseline | median paired ratio | rounds | CPU us, this / baseline |"
    " instructions, this / baseline |",
    "|---|---:|---:|---|---:|---:|",
]
for what, wn, wo, r, ratios, cn, co, inew, iold in rows:
    lines.append(f"| `nvj {what}` | {wn:.0f} / {wo:.0f} | {r:.3f} | " + ", ".join(f"{x:.3f}" for x in ratios)
                 + f" | {cn:.0f} / {co:.0f} | {inew:,} / {iold:,} ({(inew / iold - 1) * 100:+.1f}%) |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "nvj_startup", path],
               input=section, text=True, check=True)
EOF2
