#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# journal_decoder.sh: journal bytes per second that fscore's JournalDecoder
# follows on one core (target: at least 1 GB/s, 10^9 bytes), against a crc32c
# pass and a memcpy over the same bytes in the same run: the cost of reading
# them once, which no decoder avoids (csum v3 checks a crc32c of every block).
#
# Usage: bench/journal_decoder.sh [--build DIR] [--seconds S] [--rounds N]
#                                 [--markdown FILE]
#
# journal_decoder_bench builds, before any timing, a mount's worth of writes
# to a 128 MiB journal (4 KiB blocks, csum v3 + 64bit; transactions of 1 to
# 64 logged blocks, revokes, escaped blocks, tail updates; 4 wraps), then per
# round measures each variant for S seconds, in an order rotating from round
# to round: the decoder fed 4 KiB requests and 64 KiB requests, crc32c and
# memcpy over the same requests. Every decoder measurement must have
# committed every transaction with no problem reported. Reported: the median
# over rounds, and the median of the per-round ratios decoder/peer. Then
# callgrind counts the instructions per 4 KiB block of each variant over one
# more session (the run of 2 sessions minus the run of 1): deterministic.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

build="$repo_dir/build"
seconds=2
rounds=5
markdown=""
target=1.0  # GB/s

bench_option --build build text
bench_option --seconds seconds number
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")
[[ $build == "$repo_dir"/* ]] || command_line=${command_line//"$build"/BUILD}
prog="$build/bench/journal_decoder_bench"
[[ -x $prog ]] || bench_fail "$prog not found (ninja -C build journal_decoder_bench)"
bench_require python3 valgrind callgrind_annotate:valgrind

tmp=$(mktemp -d "${TMPDIR:-/tmp}/journal_decoder.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
"$prog" --seconds "$seconds" --rounds "$rounds" >"$tmp/runs.tsv" 2> >(tee "$tmp/bench.err" >&2) ||
  { echo "journal_decoder.sh: the benchmark failed (see above)" >&2; exit 1; }
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
session=$(sed -n 's/^journal_decoder_bench: //p' "$tmp/bench.err" | head -n1)

# Instructions per block: 2 sessions minus 1 session, one wrap each.
echo "journal_decoder: instructions per block under callgrind"
: >"$tmp/instr.tsv"
for variant in decode-4k decode-64k crc32c-4k memcpy-4k; do
  totals=()
  for passes in 1 2; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" -q \
      "$prog" --wraps 1 --only "$variant" --passes "$passes" >"$tmp/one.tsv" 2>"$tmp/one.err" ||
      { cat "$tmp/one.err" >&2; exit 1; }
    grep -q . "$tmp/one.tsv" || { echo "journal_decoder.sh: no run of $variant" >&2; exit 1; }
    totals+=("$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | sed -nE 's/^ *([0-9,]+) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)")
  done
  blocks=$(sed -nE 's/.*one session = ([0-9]+) writes.*/\1/p' "$tmp/one.err")
  per=$(( (totals[1] - totals[0]) / blocks ))
  printf '%s\t%s\n' "$variant" "$per" >>"$tmp/instr.tsv"
  printf '  %-11s %6d instructions per 4 KiB block\n' "$variant" "$per"
done

git_rev=$(bench_git_rev)

JD_RUNS=$tmp/runs.tsv JD_INSTR=$tmp/instr.tsv JD_MARKDOWN=$markdown JD_COMMAND=$command_line \
JD_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') JD_GIT=$git_rev JD_TARGET=$target JD_SESSION=$session \
JD_SECONDS=$seconds JD_VALGRIND=$(valgrind --version) \
JD_CPU="$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) CPUs" \
JD_LOAD="$load_start at start, $load_end at end (other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, statistics, subprocess

env = os.environ
target = float(env["JD_TARGET"])
runs = {}
order = []
failed = []
for line in open(env["JD_RUNS"]):
    rnd, name, nbytes, secs, tx, check = line.rstrip("\n").split("\t")
    if name not in order:
        order.append(name)
    runs[(name, int(rnd))] = (int(nbytes) / float(secs) / 1e9, int(tx) / float(secs))
    if check not in ("-", "ok"):
        failed.append(f"round {rnd} {name}: {check}")
rounds = sorted({r for _, r in runs})
gbs = {n: [runs[(n, r)][0] for r in rounds] for n in order}
txs = {n: [runs[(n, r)][1] for r in rounds] for n in order}
med = {n: statistics.median(v) for n, v in gbs.items()}
instr = dict(l.rstrip("\n").split("\t") for l in open(env["JD_INSTR"]))
decoders = [n for n in order if n.startswith("decode")]
big = next(n.split("-", 1)[1] for n in decoders if not n.endswith("-4k"))

def ratio(a, b):
    paired = [runs[(a, r)][0] / runs[(b, r)][0] for r in rounds]
    return statistics.median(paired), paired

print()
for n in order:
    v = gbs[n]
    extra = f"  {statistics.median(txs[n]):.0f} transactions/s" if n.startswith("decode") else ""
    print(f"{n:<12} median {med[n]:7.3f} GB/s  (" + " ".join(f"{x:.3f}" for x in v) + ")" + extra)
for d in decoders:
    size = d.split("-", 1)[1]
    for peer in (f"crc32c-{size}", f"memcpy-{size}"):
        r, _ = ratio(d, peer)
        print(f"{d} / {peer}: {r:.3f} (median of paired rounds)")
for d in decoders:
    print(f"{d}: {med[d]:.3f} GB/s  {'PASS' if med[d] >= target and not failed else 'FAIL'} (target >= {target} GB/s)")
if failed:
    print("decoder checks failed: " + "; ".join(failed))

path = env["JD_MARKDOWN"]
if not path:
    raise SystemExit(1 if failed else 0)
lines = [
    "## journal_decoder",
    "",
    "Journal bytes per second that `fscore::jbd2::JournalDecoder` follows on one thread (bench/journal_decoder_bench),"
    " against a crc32c pass and a memcpy into the journal over the same requests in the same run: reading the bytes"
    " once, which no decoder avoids (with csum v3 it checks a crc32c of every block). The writes are built before"
    " any timing with LogBuilder; only the loop feeding them is timed. GB = 10^9 bytes; target: the decoder alone"
    " sustains at least 1 GB/s of journal writes.",
    "",
    f"- Command: `{env['JD_COMMAND']}`",
    f"- Date: {env['JD_DATE']}",
    f"- Git commit: {env['JD_GIT']}",
    f"- Machine: {env['JD_CPU']}; {env['JD_VALGRIND']}",
    f"- Workload: {env['JD_SESSION']}",
    f"- Each measurement: at least {env['JD_SECONDS']} s of whole sessions, a fresh decoder; {len(rounds)} rounds, order of the variants rotating",
    f"- Decoder checks: " + ("every measurement committed every transaction (logged, escaped, revoked and log bytes equal to what was built), no problem, no checksum error" if not failed else "FAILED: " + "; ".join(failed)),
    f"- Load average (1/5/15 min): {env['JD_LOAD']}",
    "",
    "| variant | request | median GB/s | transactions/s | spread (max-min)/median | all rounds (GB/s) | instructions per 4 KiB block (callgrind) |",
    "|---|---|---:|---:|---:|---|---:|",
]
for n in order:
    kind, size = n.split("-", 1)
    v = gbs[n]
    sp = (max(v) - min(v)) / med[n] * 100
    tx = f"{statistics.median(txs[n]):.0f}" if kind == "decode" else ""
    lines.append(f"| {kind} | {size.upper().replace('K', ' KiB')} | {med[n]:.3f} | {tx} | {sp:.1f}% | "
                 + ", ".join(f"{x:.3f}" for x in v) + f" | {instr.get(n, '')} |")
lines += ["", "| decoder | GB/s (median) | / crc32c (median of paired rounds) | / memcpy (median of paired rounds) | target | verdict |",
          "|---|---:|---:|---:|---:|---|"]
for d in decoders:
    size = d.split("-", 1)[1]
    rc, _ = ratio(d, f"crc32c-{size}")
    rm, _ = ratio(d, f"memcpy-{size}")
    verdict = "PASS" if med[d] >= target and not failed else "FAIL"
    lines.append(f"| {size.upper().replace('K', ' KiB')} requests | {med[d]:.3f} | {rc:.3f} | {rm:.3f} | >= {target:.0f} GB/s | {verdict} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "journal_decoder", path],
               input=section, text=True, check=True)
raise SystemExit(1 if failed else 0)
EOF
