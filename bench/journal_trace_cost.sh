#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# journal_trace_cost.sh: what live journal tracing costs the server. The same
# nvjournal server (data=1G journal=128M data-model=none journal-model=none,
# so the server's own CPU path and not a timing model) with journal-trace=on
# against journal-trace=off, in the same run, under two loads at queue depth 16:
#
#   journal  a realistic jbd2 log (journal_replay: LogBuilder transactions of
#            1..64 blocks, revokes, escapes, tail updates, csum v3 + 64bit)
#            written 4 KiB at a time to the `journal` export, so the tracer
#            decodes real transactions;
#   data     4 KiB random writes to the `data` export (fio, nbd engine): the
#            tracer classes each one (journal/checkpoint/ordered/other);
#   xfs      an XFS log (xfs_log_replay: records as xlog_sync lays them out,
#            32 KiB log buffers, one FUA write per record) written to the
#            `journal` export, so the tracer recognises an XFS log and
#            follows its records, checking each one's CRC.
#
# Usage: bench/journal_trace_cost.sh [--build DIR] [--plugin PATH] [--replay PATH]
#                                    [--xfs-replay PATH] [--runtime SECONDS]
#                                    [--rounds N] [--ios N] [--markdown FILE]
#
# IOPS: fresh server per measurement; per round and load, on and off back to
# back (on first in odd rounds, off first in even ones); the verdict is the
# median over rounds of the paired ratio on/off (target >= 0.97: tracing
# costs at most 3%). Instructions: the whole nbdkit process under callgrind,
# (I(2N writes) - I(N writes)) / N, fresh server per run: deterministic, so it
# prices the tracer exactly where IOPS on a shared 2-core VM cannot. A first
# run with control= checks that the tracer decodes the replayed log (every
# transaction committed, no problem), and one that it follows the XFS log
# (records, no CRC failing, no problem).
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

build="$repo_dir/build"
plugin=""
replay=""
xfs_replay=""
runtime=10
rounds=5
ios=20000
markdown=""
depth=16
seed=20240601
target=0.97
server_args=(data=1G journal=128M data-model=none journal-model=none)

bench_option --build build text
bench_option --plugin plugin text
bench_option --replay replay text
bench_option --xfs-replay xfs_replay text
bench_option --runtime runtime count
bench_option --rounds rounds count
bench_option --ios ios count
bench_option --markdown markdown text
bench_parse "$@"
# A build directory outside the repository is shown as BUILD in the report.
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
[[ $build == "$repo_dir"/* ]] || command_line=${command_line//"$build"/BUILD}
[[ -n $plugin ]] || plugin="$build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
[[ -n $replay ]] || replay="$build/bench/journal_replay"
[[ -n $xfs_replay ]] || xfs_replay="$build/bench/xfs_log_replay"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
[[ -x $replay ]] || bench_fail "journal_replay not found: $replay (ninja -C build journal_replay)"
[[ -x $xfs_replay ]] || bench_fail "xfs_log_replay not found: $xfs_replay (ninja -C build xfs_log_replay)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
replay=$(cd "$(dirname "$replay")" && pwd)/$(basename "$replay")
xfs_replay=$(cd "$(dirname "$xfs_replay")" && pwd)/$(basename "$xfs_replay")
bench_require nbdkit fio valgrind callgrind_annotate:valgrind python3 curl

source "$script_dir/lib/server.sh"
bench_init journal_trace_cost

# serve TRACE [PREFIX...]: a fresh server with journal-trace=TRACE, run under
# PREFIX (e.g. valgrind) if given.
serve() {
  local trace=$1
  shift
  bench_start "$@" nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" "${server_args[@]}" \
    "journal-trace=$trace"
}

# load LOAD MODE AMOUNT: drives the server; MODE seconds or writes. Prints IOPS.
load() {
  local what=$1 mode=$2 amount=$3
  case $what in
    journal)
      local -a limit=(--seconds "$amount")
      if [[ $mode == writes ]]; then limit=(--writes "$amount"); fi
      "$replay" "nbd+unix:///journal?socket=$tmp/s.sock" --depth "$depth" "${limit[@]}" --seed "$seed" \
        >"$tmp/load.out" 2>"$tmp/load.err" || { cat "$tmp/load.err" >&2; exit 1; }
      sed -nE 's/.* iops ([0-9.]+).*/\1/p' "$tmp/load.out"
      ;;
    xfs)
      local -a limit=(--seconds "$amount")
      if [[ $mode == writes ]]; then limit=(--writes "$amount"); fi
      "$xfs_replay" "nbd+unix:///journal?socket=$tmp/s.sock" --depth "$depth" "${limit[@]}" --seed "$seed" \
        >"$tmp/load.out" 2>"$tmp/load.err" || { cat "$tmp/load.err" >&2; exit 1; }
      sed -nE 's/.* iops ([0-9.]+).*/\1/p' "$tmp/load.out"
      ;;
    data)
      local -a limit=(--time_based --runtime="$amount")
      if [[ $mode == writes ]]; then limit=(--number_ios="$amount"); fi
      fio --name=w --ioengine=nbd --uri="nbd+unix:///data?socket=$tmp/s.sock" --rw=randwrite --bs=4k \
          --iodepth="$depth" --numjobs=1 --size=1G "${limit[@]}" --randrepeat=1 --randseed="$seed" \
          --output-format=json >"$tmp/load.out" 2>"$tmp/load.err" || { cat "$tmp/load.err" "$tmp/load.out" >&2; exit 1; }
      python3 - "$tmp/load.out" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
if job.get("error"):
    sys.exit(f"fio job error {job['error']}")
print(f"{job['write']['iops']:.0f}")
EOF
      ;;
  esac
}

# --- does the tracer follow the replayed log? --------------------------------
bench_start nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" "${server_args[@]}" \
  journal-trace=on "control=$tmp/ctl"
load journal seconds 2 >/dev/null
curl -sf --unix-socket "$tmp/ctl" http://lab/journal >"$tmp/journal.json"
bench_stop
check=$(python3 - "$tmp/journal.json" "$tmp/load.err" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
t = d["committed_transactions"]
ok = d["synchronized"] and t > 0 and d["problems"] == 0 and d["checksum_errors"] == 0
print(f"{'ok' if ok else 'FAILED'}: {t} transactions, {d['logged_blocks']} logged blocks "
      f"({d['escaped_blocks']} escaped), {d['revoked_blocks']} revoke records, {d['superblock_writes']} superblock "
      f"updates decoded in 2 s, {d['checksum_errors']} checksum errors, {d['problems']} problems")
EOF
)
echo "journal_trace_cost: tracer check: $check"
[[ $check == ok:* ]] || { echo "journal_trace_cost.sh: the tracer does not follow the replayed log" >&2; exit 1; }

bench_start nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" "${server_args[@]}" \
  journal-trace=on "control=$tmp/ctl"
load xfs seconds 2 >/dev/null
curl -sf --unix-socket "$tmp/ctl" http://lab/journal >"$tmp/journal.json"
bench_stop
xfs_check=$(python3 - "$tmp/journal.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("format") == "xfs" and d["synchronized"] and d["records"] > 0 and d["problems"] == 0 and d["checksum_errors"] == 0
print(f"{'ok' if ok else 'FAILED'}: format {d.get('format')}, {d.get('records', 0)} records "
      f"({d.get('operations', 0)} operations) followed in 2 s, {d['checksum_errors']} CRC failures, "
      f"{d['problems']} problems")
EOF
)
echo "journal_trace_cost: XFS tracer check: $xfs_check"
[[ $xfs_check == ok:* ]] || { echo "journal_trace_cost.sh: the tracer does not follow the XFS log" >&2; exit 1; }

# --- IOPS, paired rounds ------------------------------------------------------
results="$tmp/iops.tsv"
: >"$results"
loads=(journal data xfs)
total=$((rounds * ${#loads[@]} * 2))
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
n=0
echo "journal_trace_cost: $rounds round(s) x loads ${loads[*]} x trace {on,off}, ${runtime} s each at depth $depth"
for ((round = 1; round <= rounds; round++)); do
  for what in "${loads[@]}"; do
    order="on off"
    if ((round % 2 == 0)); then order="off on"; fi
    for trace in $order; do
      n=$((n + 1))
      serve "$trace"
      iops=$(load "$what" seconds "$runtime")
      bench_stop
      printf '%s\t%s\t%s\t%s\n' "$what" "$trace" "$round" "$iops" >>"$results"
      printf '  [%2d/%d] round %d  %-7s trace=%-3s %8s IOPS\n' "$n" "$total" "$round" "$what" "$trace" "$iops"
    done
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# --- instructions per write ---------------------------------------------------
counts="$tmp/instructions.tsv"
: >"$counts"
echo "journal_trace_cost: $ios and $((2 * ios)) writes per load and setting, under callgrind"
for what in "${loads[@]}"; do
  for trace in on off; do
    totals=()
    for k in 1 2; do
      rm -f "$tmp/cg.out"
      serve "$trace" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" -q
      load "$what" writes $((k * ios)) >/dev/null
      bench_stop
      totals+=("$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | sed -nE 's/^ *([0-9,]+) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)")
      if [[ $k == 2 && $trace == on ]]; then cp "$tmp/cg.out" "$tmp/cg.$what.on"; fi
    done
    per=$(( (totals[1] - totals[0]) / ios ))
    printf '%s\t%s\t%s\n' "$what" "$trace" "$per" >>"$counts"
    printf '  %-7s trace=%-3s %7d instructions per write\n' "$what" "$trace" "$per"
  done
done
# Where the tracer's instructions go: its functions (inclusive) in the longer
# run with tracing on, per write of that run.
for what in "${loads[@]}"; do
  callgrind_annotate --inclusive=yes "$tmp/cg.$what.on" 2>/dev/null |
    python3 -c '
import re, sys
n = int(sys.argv[2])
seen = {}
pat = re.compile(r"JournalTracer|JournalDecoder|LogFollower|XfsLogTracer|TrafficClassifier|Ext4Layout|LogSource|crc32c|checksum|parse_|"
                 r"LatencyHistogram|ExtentSet|mutex|futex|lll_lock")
for line in sys.stdin:
    m = re.match(r"^\s*([0-9,]+) \([ 0-9.]+%\)\s+(.*)$", line)
    if not m or " [" not in m.group(2):
        continue
    fn = m.group(2).rsplit(" [", 1)[0]
    fn = fn.split(":", 1)[1] if ":" in fn else fn
    if not pat.search(fn) or fn in seen:
        continue
    seen[fn] = int(m.group(1).replace(",", "")) / n
for fn, v in list(seen.items())[:12]:
    print(f"{sys.argv[1]}\t{v:.0f}\t{fn}")
' "$what" $((2 * ios)) >>"$tmp/hot.txt" || true
done

git_rev=$(bench_git_rev)

JT_RESULTS=$results JT_COUNTS=$counts JT_HOT=$tmp/hot.txt JT_SELF=$tmp/self.txt JT_MARKDOWN=$markdown \
JT_COMMAND=$command_line JT_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') \
JT_NBDKIT=$(nbdkit --version | head -n1) JT_FIO=$(fio --version | head -n1) JT_VALGRIND=$(valgrind --version) \
JT_GIT=$git_rev JT_CHECK=$check JT_XFS_CHECK=$xfs_check JT_IOS=$ios JT_TARGET=$target \
JT_SETUP="nbdkit nvjournal ${server_args[*]} journal-trace=on|off (stats on, nbdkit default threads), fresh server per measurement; depth $depth; journal: journal_replay --depth $depth --seconds $runtime --seed $seed on the journal export; xfs: xfs_log_replay --depth $depth --seconds $runtime --seed $seed on the journal export; data: fio --ioengine=nbd --rw=randwrite --bs=4k --iodepth=$depth --size=1G --time_based --runtime=$runtime --randrepeat=1 --randseed=$seed on the data export; order per load: on then off in odd rounds, off then on in even rounds" \
JT_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, re, statistics, subprocess

env = os.environ
target = float(env["JT_TARGET"])
by = {}
for line in open(env["JT_RESULTS"]):
    what, trace, rnd, iops = line.rstrip("\n").split("\t")
    by[(what, trace, int(rnd))] = float(iops)
loads = [w for w in ("journal", "data", "xfs") if any(k[0] == w for k in by)]
rounds = sorted({k[2] for k in by})
per = {}
for line in open(env["JT_COUNTS"]):
    what, trace, n = line.rstrip("\n").split("\t")
    per[(what, trace)] = int(n)

iops_rows, ratio_rows, instr_rows = [], [], []
for w in loads:
    for t in ("on", "off"):
        v = [by[(w, t, r)] for r in rounds]
        m = statistics.median(v)
        iops_rows.append((w, t, m, (max(v) - min(v)) / m * 100 if m else 0.0, v))
    paired = [by[(w, "on", r)] / by[(w, "off", r)] for r in rounds]
    r = statistics.median(paired)
    of_medians = statistics.median([by[(w, "on", x)] for x in rounds]) / statistics.median([by[(w, "off", x)] for x in rounds])
    ratio_rows.append((w, r, paired, of_medians, "PASS" if r >= target else "FAIL"))
    on, off = per[(w, "on")], per[(w, "off")]
    cost = (on - off) / off
    instr_rows.append((w, on, off, on - off, cost, off / on))

print()
for w, t, m, sp, v in iops_rows:
    print(f"{w:<8} trace={t:<3} median {m:9.0f} IOPS  spread {sp:5.1f}%  " + " ".join(f"{x:.0f}" for x in v))
for w, r, paired, om, verdict in ratio_rows:
    print(f"{w}: IOPS on/off {r:.3f} (median of paired: " + " ".join(f"{x:.3f}" for x in paired)
          + f"; ratio of medians {om:.3f})  {verdict} (target >= {target})")
for w, on, off, d, cost, implied in instr_rows:
    print(f"{w}: instructions per write on {on}, off {off}: +{d} ({cost * 100:.1f}%)")

path = env["JT_MARKDOWN"]
if not path:
    raise SystemExit(0)
hot = [l.rstrip("\n").split("\t") for l in open(env["JT_HOT"]) if l.strip()]
lines = [
    "## journal_trace_cost",
    "",
    "What live journal tracing costs: the same nvjournal server with `journal-trace=on` against `journal-trace=off`,"
    " in the same run, at queue depth 16. `journal`: a realistic jbd2 log (bench/journal_replay: transactions of"
    " 1 to 64 logged blocks, revokes, escaped blocks, tail updates, csum v3 + 64bit, remounting after 2 wraps)"
    " written 4 KiB per request to the journal export, so the tracer decodes real transactions; `data`: 4 KiB"
    " random writes to the data export, which the tracer classes; `xfs`: an XFS log (bench/xfs_log_replay: records"
    " as xlog_sync lays them out, 32 KiB log buffers, one FUA write per record) written to the journal export, which"
    " the tracer recognises and follows, checking every record's CRC. Target: on/off >= 0.97 (tracing costs at most 3%).",
    "",
    f"- Command: `{env['JT_COMMAND']}`",
    f"- Date: {env['JT_DATE']}",
    f"- nbdkit: {env['JT_NBDKIT']}; {env['JT_FIO']}; {env['JT_VALGRIND']}",
    f"- Git commit: {env['JT_GIT']}",
    f"- Setup: {env['JT_SETUP']}",
    f"- Tracer check (control= server, journal load, 2 s): {env['JT_CHECK']}",
    f"- XFS tracer check (control= server, xfs load, 2 s): {env['JT_XFS_CHECK']}",
    f"- Load average (1/5/15 min): {env['JT_LOAD']}",
    "",
    "| load | trace | median IOPS | spread (max-min)/median | all rounds |",
    "|---|---|---:|---:|---|",
]
for w, t, m, sp, v in iops_rows:
    lines.append(f"| {w} | {t} | {m:.0f} | {sp:.1f}% | " + ", ".join(f"{x:.0f}" for x in v) + " |")
lines += ["", "| load | IOPS on/off (median of paired rounds) | paired rounds | ratio of medians | target | verdict |",
          "|---|---:|---|---:|---:|---|"]
for w, r, paired, om, verdict in ratio_rows:
    lines.append(f"| {w} | {r:.3f} | " + ", ".join(f"{x:.3f}" for x in paired) + f" | {om:.3f} | >= {target} | {verdict} |")
lines += ["", f"Instructions of the whole nbdkit process per write (callgrind, (I(2N) - I(N)) / N, N = {env['JT_IOS']}): "
          "the tracer's deterministic price, which IOPS on a shared 2-CPU machine cannot resolve to a few percent; "
          "no target of its own (the target is the IOPS ratio above):", "",
          "| load | trace on | trace off | tracing cost | cost / off | off / on |",
          "|---|---:|---:|---:|---:|---:|"]
for w, on, off, d, cost, implied in instr_rows:
    lines.append(f"| {w} | {on} | {off} | {d} | {cost * 100:.1f}% | {implied:.3f} |")
if hot:
    lines += ["", "Where the tracer's instructions go, tracing on: its functions' inclusive instructions over the run of"
              f" {2 * int(env['JT_IOS'])} writes, divided by its writes (callgrind_annotate --inclusive=yes):", "",
              "| load | instructions per write | function |", "|---|---:|---|"]
    for w, v, fn in hot:
        fn = fn.replace("|", "\\|")
        lines.append(f"| {w} | {v} | `{fn}` |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "journal_trace_cost", path],
               input=section, text=True, check=True)
EOF
