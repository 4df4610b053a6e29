#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nbd_iops.sh: 4 KiB random-write IOPS of the nvjournal nbdkit plugin against
# nbdkit's own `memory` plugin (the peer), measured in the same run with fio's
# nbd engine at queue depth 1 and 16.
#
# Usage: bench/nbd_iops.sh [--plugin PATH] [--runtime SECONDS] [--rounds N]
#                          [--markdown FILE]
#
# Every measurement gets a freshly started server (so every sample starts from
# an empty sparse disk), and the servers are interleaved: for each round, for
# each depth, ours and memory back to back (ours first in odd rounds, memory
# first in even ones). The verdict uses the median over rounds of the paired
# ratio ours/memory of one round and depth, which cancels the machine's drift
# between rounds (target >= 0.97); the median IOPS per (server, depth) is
# reported too.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
runtime=10
rounds=5
markdown=""
depths=(1 16)
disk_size=1G
block_size=4k
seed=20240601
target=0.97

bench_option --plugin plugin text
bench_option --runtime runtime count
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio python3

# --- processes we started, and their cleanup --------------------------------
source "$script_dir/lib/server.sh"
bench_init nbd_iops

# start_server NAME: a fresh server NAME (ours or memory) on $tmp/s.sock;
# sets uri.
start_server() {
  local -a args=(-U "$tmp/s.sock" -P "$tmp/s.pid" --foreground --exit-with-parent)
  case "$1" in
    ours) args+=("$plugin" "data=$disk_size" data-model=none); uri="nbd+unix:///data?socket=$tmp/s.sock" ;;  # no timing model
    memory) args+=(memory "$disk_size"); uri="nbd+unix:///?socket=$tmp/s.sock" ;;
    *) bench_fail "unknown server $1" ;;
  esac
  bench_start nbdkit "${args[@]}"
}

# run_fio DEPTH OUT: one fio job of 4 KiB random writes against $uri.
run_fio() {
  local depth=$1 out=$2 rc=0
  fio --name=randwrite --ioengine=nbd --uri="$uri" \
      --rw=randwrite --bs="$block_size" --iodepth="$depth" --numjobs=1 \
      --size="$disk_size" --time_based --runtime="$runtime" \
      --randrepeat=1 --randseed="$seed" \
      --output-format=json >"$out" 2>"$out.err" &
  fio_pid=$!
  wait "$fio_pid" || rc=$?
  fio_pid=""
  if [[ $rc -ne 0 ]]; then
    echo "nbd_iops.sh: fio failed (rc=$rc):" >&2
    cat "$out.err" "$out" >&2
    exit 1
  fi
}

# fio's nbd engine prints "fio: connected to NBD server" on stdout before the
# JSON document: parse from the first '{'.
iops_of() {
  python3 - "$1" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
if job.get("error"):
    sys.exit(f"fio job error {job['error']}")
print(f"{job['write']['iops']:.0f}")
EOF
}

# --- measurements -------------------------------------------------------------
results="$tmp/results.tsv"
: >"$results"
total=$((rounds * ${#depths[@]} * 2))
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
n=0
echo "nbd_iops: plugin $plugin"
echo "nbd_iops: $rounds round(s) x depths ${depths[*]} x {ours,memory}, ${runtime} s each (~$((total * (runtime + 1))) s)"
for ((round = 1; round <= rounds; round++)); do
  for depth in "${depths[@]}"; do
    order="ours memory"
    if ((round % 2 == 0)); then order="memory ours"; fi
    for server in $order; do
      n=$((n + 1))
      start_server "$server"
      run_fio "$depth" "$tmp/fio.json"
      bench_stop
      iops=$(iops_of "$tmp/fio.json")
      printf '%s\t%s\t%s\t%s\n' "$server" "$depth" "$round" "$iops" >>"$results"
      printf '  [%2d/%d] round %d  qd%-2s  %-6s  %8s IOPS\n' "$n" "$total" "$round" "$depth" "$server" "$iops"
    done
  done
done

# --- report -------------------------------------------------------------------
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
git_rev=$(bench_git_rev)

NBD_IOPS_RESULTS=$results \
NBD_IOPS_MARKDOWN=$markdown \
NBD_IOPS_COMMAND=$command_line \
NBD_IOPS_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') \
NBD_IOPS_NBDKIT=$(nbdkit --version | head -n1) \
NBD_IOPS_FIO=$(fio --version | head -n1) \
NBD_IOPS_GIT=$git_rev \
NBD_IOPS_PLUGIN=$plugin NBD_IOPS_REPO=$repo_dir \
NBD_IOPS_SETUP="fio --ioengine=nbd --rw=randwrite --bs=$block_size --numjobs=1 --size=$disk_size --time_based --runtime=$runtime --randrepeat=1 --randseed=$seed; disk $disk_size; nbdkit default threads; fresh server per measurement; order per depth: ours then memory in odd rounds, memory then ours in even rounds" \
NBD_IOPS_TARGET=$target \
NBD_IOPS_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, statistics, subprocess

env = os.environ
target = float(env["NBD_IOPS_TARGET"])
samples = {}
for line in open(env["NBD_IOPS_RESULTS"]):
    server, depth, _round, iops = line.split("\t")
    samples.setdefault((server, int(depth)), []).append(float(iops))
depths = sorted({d for _, d in samples})
median = {k: statistics.median(v) for k, v in samples.items()}

def spread(v):
    m = statistics.median(v)
    return (max(v) - min(v)) / m * 100 if m else 0.0

rows = []
for d in depths:
    for s in ("ours", "memory"):
        v = samples[(s, d)]
        rows.append((s, d, median[(s, d)], v, spread(v)))
# Paired: one ratio per round (the two servers ran back to back), then the
# median over rounds.
by_round = {}
for line in open(env["NBD_IOPS_RESULTS"]):
    server, depth, rnd, iops = line.split("\t")
    by_round[(server, int(depth), int(rnd))] = float(iops)
ratios = []
for d in depths:
    rounds = sorted({r for (_, dd, r) in by_round if dd == d})
    paired = [by_round[("ours", d, r)] / by_round[("memory", d, r)] for r in rounds]
    r = statistics.median(paired)
    ratios.append((d, r, median[("ours", d)] / median[("memory", d)], paired, "PASS" if r >= target else "FAIL"))

# terminal
print()
print(f"{'server':<8} {'depth':>5} {'median IOPS':>12}  {'spread':>7}  rounds")
for s, d, m, v, sp in rows:
    print(f"{s:<8} {d:>5} {m:>12.0f}  {sp:>6.1f}%  " + " ".join(f"{x:.0f}" for x in v))
print()
for d, r, of_medians, paired, verdict in ratios:
    print(f"ratio ours/memory at qd{d}: {r:.3f} (median of paired rounds: "
          + " ".join(f"{x:.3f}" for x in paired) + f"; ratio of medians {of_medians:.3f})  {verdict} (target >= {target})")

path = env["NBD_IOPS_MARKDOWN"]
if not path:
    raise SystemExit(0)

lines = [
    "## nbd_iops",
    "",
    "4 KiB random writes through fio's nbd engine, nvjournal plugin (`ours`, `data` export)"
    " against `nbdkit memory` (the peer), in the same run.",
    "",
    f"- Command: `{env['NBD_IOPS_COMMAND']}`",
    f"- Date: {env['NBD_IOPS_DATE']}",
    f"- nbdkit: {env['NBD_IOPS_NBDKIT']}",
    f"- fio: {env['NBD_IOPS_FIO']}",
    f"- Git commit: {env['NBD_IOPS_GIT']}",
    f"- Plugin: `{os.path.relpath(env['NBD_IOPS_PLUGIN'], env['NBD_IOPS_REPO'])}`",
    f"- Setup: {env['NBD_IOPS_SETUP']}",
    f"- Load average (1/5/15 min): {env['NBD_IOPS_LOAD']}",
    "",
    "| server | depth | median IOPS | spread (max-min)/median | all rounds |",
    "|---|---:|---:|---:|---|",
]
for s, d, m, v, sp in rows:
    lines.append(f"| {s} | {d} | {m:.0f} | {sp:.1f}% | " + ", ".join(f"{x:.0f}" for x in v) + " |")
lines += ["", "| depth | ratio ours/memory (median of paired rounds) | paired rounds | ratio of medians | target | verdict |",
          "|---:|---:|---|---:|---:|---|"]
for d, r, of_medians, paired, verdict in ratios:
    lines.append(f"| {d} | {r:.3f} | " + ", ".join(f"{x:.3f}" for x in paired)
                 + f" | {of_medians:.3f} | >= {target} | {verdict} |")
section = "\n".join(lines) + "\n"

subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "nbd_iops", path],
               input=section, text=True, check=True)
EOF
