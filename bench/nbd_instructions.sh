#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nbd_instructions.sh: instructions the whole nbdkit process executes per 4 KiB
# random write, with the nvjournal plugin (`ours`, and `ours-nostats` with
# stats=off, to price the statistics) and with nbdkit's `memory` plugin (the
# peer), counted by valgrind's callgrind. Instruction counts do
# not depend on what else the machine is doing, so they show a difference of
# a few percent that IOPS on a shared 2-core VM cannot.
#
# Usage: bench/nbd_instructions.sh [--plugin PATH] [--ios N] [--rounds R] [--markdown FILE]
#
# Per server and queue depth: two runs on fresh servers, of N and 2N writes
# (fio, nbd engine, same seed); the cost of one write is the difference in
# the process's instruction total divided by N, so start-up and connection
# set-up cancel out. Each run's writes land on a 1 GiB disk, so the second N
# writes of the longer run meet both fresh and allocated pages.
#
# Instruction counts are not fully deterministic for a threaded server:
# which worker thread wakes for which request, and how often a thread finds
# a lock taken, change from run to run (nbdkit's memory plugin varied by 1.6x
# at depth 16). So the servers take turns for R rounds (default 3) and the
# figure is each server's median, with every round shown.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
ios=20000
rounds=3
markdown=""
depths=(1 16)
seed=20240601

bench_option --plugin plugin text
bench_option --ios ios count
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio valgrind callgrind_annotate:valgrind

source "$script_dir/lib/server.sh"
bench_init nbd_instructions

# count SERVER DEPTH N: instructions of nbdkit serving N writes, printed.
count() {
  local server=$1 depth=$2 n=$3 export_name=""
  local args=("$plugin" data=1G data-model=none)  # raw speed: no timing model
  case $server in
    memory) args=(memory 1G) ;;
    ours-nostats) args+=(stats=off); export_name=data ;;
    *) export_name=data ;;
  esac
  rm -f "$tmp/cg.out"
  bench_start valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" -q \
    nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "${args[@]}"
  fio --name=w --ioengine=nbd --uri="nbd+unix:///$export_name?socket=$tmp/s.sock" --rw=randwrite --bs=4k \
      --iodepth="$depth" --size=1G --number_ios="$n" --randrepeat=1 --randseed="$seed" \
      --output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" || { cat "$tmp/fio.err" >&2; exit 1; }
  bench_stop
  callgrind_annotate "$tmp/cg.out" 2>/dev/null | sed -nE 's/^ *([0-9,]+) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

echo "nbd_instructions: $ios and $((2 * ios)) writes per server and depth, $rounds rounds, under callgrind"
results="$tmp/results.tsv"
: >"$results"
for depth in "${depths[@]}"; do
  for round in $(seq "$rounds"); do
    for server in ours ours-nostats memory; do
      one=$(count "$server" "$depth" "$ios")
      two=$(count "$server" "$depth" $((2 * ios)))
      per=$(( (two - one) / ios ))
      printf '%s\t%s\t%s\t%s\t%s\n' "$server" "$depth" "$one" "$two" "$per" >>"$results"
      printf '  qd%-2s round %d %-12s %6d instructions per write\n' "$depth" "$round" "$server" "$per"
    done
  done
done

NI_RESULTS=$results NI_MARKDOWN=$markdown NI_COMMAND=$command_line NI_IOS=$ios NI_ROUNDS=$rounds \
NI_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') NI_NBDKIT=$(nbdkit --version | head -n1) \
NI_VALGRIND=$(valgrind --version) \
NI_GIT=$(bench_git_rev) \
BENCH_DIR=$script_dir python3 - <<'PY'
import os, statistics, subprocess
env = os.environ
rows = [line.rstrip("\n").split("\t") for line in open(env["NI_RESULTS"])]
rounds = {}  # (server, depth) -> per-write counts, in round order
for r in rows:
    rounds.setdefault((r[0], int(r[1])), []).append(int(r[4]))
per = {key: round(statistics.median(values)) for key, values in rounds.items()}
depths = sorted({d for _, d in per})
def spread(server, d):
    return ", ".join(str(v) for v in rounds[(server, d)])
print()
for d in depths:
    o, n, m = per[("ours", d)], per[("ours-nostats", d)], per[("memory", d)]
    print(f"qd{d}: ours {o} vs memory {m} instructions per write: ours costs {o / m:.3f} of memory; "
          f"statistics cost {o - n} ({(o - n) / n * 100:.1f}% of ours without them)")
path = env["NI_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## nbd_instructions",
    "",
    "Instructions the whole nbdkit process executes per 4 KiB random write (fio nbd engine, 1 GiB disk),"
    " counted by callgrind: (total for 2N writes - total for N writes) / N, fresh server per run.",
    "",
    f"- Command: `{env['NI_COMMAND']}`",
    f"- Date: {env['NI_DATE']}",
    f"- nbdkit: {env['NI_NBDKIT']}; {env['NI_VALGRIND']}",
    f"- Git commit: {env['NI_GIT']}",
    f"- N = {env['NI_IOS']}; {env['NI_ROUNDS']} rounds, the servers taking turns; each figure is the median"
    " of the rounds (all rounds in the last three columns)",
    "",
    "| depth | ours | ours, stats=off | memory | ours / memory | statistics cost"
    " | rounds: ours | rounds: stats=off | rounds: memory |",
    "|---:|---:|---:|---:|---:|---:|---|---|---|",
]
for d in depths:
    o, n, m = per[("ours", d)], per[("ours-nostats", d)], per[("memory", d)]
    lines.append(f"| {d} | {o} | {n} | {m} | {o / m:.3f} | {o - n} ({(o - n) / n * 100:.1f}%)"
                 f" | {spread('ours', d)} | {spread('ours-nostats', d)} | {spread('memory', d)} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "nbd_instructions", path],
               input=section, text=True, check=True)
PY
