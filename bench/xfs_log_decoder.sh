#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# xfs_log_decoder.sh: XFS log bytes per second that fscore's LogFollower
# follows on one core (target: at least 1 GB/s, 10^9 bytes), against a
# crc32c pass and a memcpy over the same bytes in the same run: the cost of
# reading them once, which no decoder avoids (every record's CRC covers all
# its blocks).
#
# Usage: bench/xfs_log_decoder.sh [--build DIR] [--seconds S] [--rounds N]
#                                 [--markdown FILE]
#
# xfs_log_decoder_bench builds, before any timing, records of random length
# (1 to 512 data blocks, 256 KiB log buffers, 1 to 200 operations) that
# wrap a 64 MiB log 4 times, laid out as the kernel writes them, then per
# round measures each variant for S seconds, in an order rotating from round
# to round: the follower fed one write per record (split where it wraps) and
# pieces of at most 128 KiB, crc32c and memcpy over the same writes. Every
# follower measurement must have found every record whole with a good CRC
# and no problem. Reported: the median over rounds, and the median of the
# per-round ratios follower/peer.
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
prog="$build/bench/xfs_log_decoder_bench"
[[ -x $prog ]] || bench_fail "$prog not found (ninja -C build xfs_log_decoder_bench)"
bench_require python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xfs_log_decoder.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
"$prog" --seconds "$seconds" --rounds "$rounds" >"$tmp/runs.tsv" 2> >(tee "$tmp/bench.err" >&2) ||
  { echo "xfs_log_decoder.sh: the benchmark failed (see above)" >&2; exit 1; }
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
session=$(sed -n 's/^xfs_log_decoder_bench: //p' "$tmp/bench.err" | head -n1)

XD_RUNS=$tmp/runs.tsv XD_MARKDOWN=$markdown XD_COMMAND=$command_line \
XD_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') XD_GIT=$(bench_git_rev) XD_TARGET=$target XD_SESSION=$session \
XD_SECONDS=$seconds XD_CPU="$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) CPUs" \
XD_LOAD="$load_start at start, $load_end at end (other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'PY'
import os, statistics, subprocess

env = os.environ
target = float(env["XD_TARGET"])
runs, order, failed = {}, [], []
for line in open(env["XD_RUNS"]):
    rnd, name, nbytes, secs, records, check = line.rstrip("\n").split("\t")
    if name not in order:
        order.append(name)
    runs[(name, int(rnd))] = (int(nbytes) / float(secs) / 1e9, int(records) / float(secs))
    if check not in ("-", "ok"):
        failed.append(f"round {rnd} {name}: {check}")
rounds = sorted({r for _, r in runs})
gbs = {n: [runs[(n, r)][0] for r in rounds] for n in order}
med = {n: statistics.median(v) for n, v in gbs.items()}
followers = [n for n in order if n.startswith("follow")]

def ratio(a, b):
    return statistics.median(runs[(a, r)][0] / runs[(b, r)][0] for r in rounds)

print()
for n in order:
    print(f"{n:<14} median {med[n]:7.3f} GB/s  (" + " ".join(f"{x:.3f}" for x in gbs[n]) + ")")
for f in followers:
    size = f.split("-", 1)[1]
    print(f"{f}: {med[f]:.3f} GB/s, / crc32c {ratio(f, 'crc32c-' + size):.3f}, / memcpy {ratio(f, 'memcpy-' + size):.3f}"
          f"  {'PASS' if med[f] >= target and not failed else 'FAIL'} (target >= {target} GB/s)")
if failed:
    print("follower checks failed: " + "; ".join(failed))
path = env["XD_MARKDOWN"]
if not path:
    raise SystemExit(1 if failed else 0)

def label(size):
    return "one per record" if size == "record" else "at most " + size.upper().replace("K", " KiB")

lines = [
    "## xfs_log_decoder",
    "",
    "XFS log bytes per second that `fscore::xfs::LogFollower` (the live XFS log decoder) follows on one thread"
    " (bench/xfs_log_decoder_bench), against a crc32c pass and a memcpy into the log over the same writes in the same"
    " run: reading the bytes once, which no decoder avoids (each record's CRC covers all its blocks). The records are"
    " built before any timing by fscore's record builder, as the kernel lays them out; only the loop feeding them is"
    " timed. GB = 10^9 bytes; target: the follower alone sustains at least 1 GB/s of log writes.",
    "",
    f"- Command: `{env['XD_COMMAND']}`",
    f"- Date: {env['XD_DATE']}",
    f"- Git commit: {env['XD_GIT']}",
    f"- Machine: {env['XD_CPU']}",
    f"- Workload: {env['XD_SESSION']}",
    f"- Each measurement: at least {env['XD_SECONDS']} s of whole sessions, a fresh follower; {len(rounds)} rounds, order of the variants rotating",
    "- Follower checks: " + ("every measurement found every record whole, its CRC good, no problem" if not failed else "FAILED: " + "; ".join(failed)),
    f"- Load average (1/5/15 min): {env['XD_LOAD']}",
    "",
    "| variant | writes | median GB/s | records/s | spread (max-min)/median | all rounds (GB/s) |",
    "|---|---|---:|---:|---:|---|",
]
for n in order:
    kind, size = n.split("-", 1)
    v = gbs[n]
    rec = f"{statistics.median(runs[(n, r)][1] for r in rounds):.0f}" if kind == "follow" else ""
    lines.append(f"| {kind} | {label(size)} | {med[n]:.3f} | {rec} | {(max(v) - min(v)) / med[n] * 100:.1f}% | "
                 + ", ".join(f"{x:.3f}" for x in v) + " |")
lines += ["", "| follower | GB/s (median) | / crc32c (median of paired rounds) | / memcpy (median of paired rounds) | target | verdict |",
          "|---|---:|---:|---:|---:|---|"]
for f in followers:
    size = f.split("-", 1)[1]
    verdict = "PASS" if med[f] >= target and not failed else "FAIL"
    lines.append(f"| {label(size)} | {med[f]:.3f} | {ratio(f, 'crc32c-' + size):.3f} | {ratio(f, 'memcpy-' + size):.3f} | >= {target:.0f} GB/s | {verdict} |")
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "xfs_log_decoder", path],
               input="\n".join(lines) + "\n", text=True, check=True)
raise SystemExit(1 if failed else 0)
PY
