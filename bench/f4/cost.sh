#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/f4/cost.sh: what F4's fix costs, two kernels side by side (the same
# source and configuration, without and with the fix), each run in turn
# (A B A B ...) in a guest on the default devices (the data disk on the hdd
# model with its write cache, the journal on the NVRAM export), ext4 with
# its journal there:
#   synctest  the seeds' MTA simulator (nvj-workload synctest: 20 processes,
#             20 passes, each file and its directory fsynced): its time, its
#             files/s and its fsync latencies;
#   writers   the Tux3 writer (nvj-workload writers: 200 tasks of 40 1 KiB
#             chunks, no fsync), then 12 s of periodic commits (commit=5,
#             the default): the time the writes took;
# and for each, the flushes the guest's kernel sent the data disk
# (/sys/block/sda/stat, field 16) over the run, and per second.
#
# Usage: bench/f4/cost.sh [--nvj PATH] --without K --with K [--runs N] --out DIR
# Prints a Markdown table (also DIR/table.md); exit 0 when every run ran, 1
# when one could not, 2 for bad input. Needs root.
set -euo pipefail
nvj=${NVJ:-nvj}
without="" with="" runs=3 out=""
usage() { echo "bench/f4/cost.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nvj) nvj=${2:?}; shift 2 ;;
    --without) without=${2:?}; shift 2 ;;
    --with) with=${2:?}; shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[ -n "$without" ] && [ -n "$with" ] || usage "--without K and --with K are required"
[ -n "$out" ] || usage "--out DIR is required"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || usage "--runs takes a count from 1, not '$runs'"
[ "$(id -u)" = 0 ] || usage "needs root"
mkdir -p "$out"

# In the guest (busybox): the data disk's flushes around the workload.
probe='flushes() { awk "{ print \$16 }" /sys/block/sda/stat; }
a=$(flushes); s=$(cut -d" " -f1 /proc/uptime)
"$@"
b=$(flushes); e=$(cut -d" " -f1 /proc/uptime)
echo "probe: flushes $((b - a)) seconds $(awk "BEGIN { print $e - $s }")"'
run_one() {  # KERNEL_LABEL KERNEL WORKLOAD RUN
  local log="$out/$1-$3-$4.log" cmd
  case "$3" in
    synctest) cmd=(nvj-workload synctest --processes 20 --passes 20 --fsync-file --fsync-dir st) ;;
    writers) cmd=(sh -c 'nvj-workload writers --tasks 200 --chunks 40 wr && sleep 12') ;;
  esac
  if ! "$nvj" vm --kernel "$2" -- sh -c "$probe" probe "${cmd[@]}" >"$log" 2>&1; then
    echo "$1 $3 run $4: could not run: $(tail -n 2 "$log" | tr '\n' ' ')" >&2
    return 1
  fi
  python3 - "$1" "$3" "$4" "$log" >>"$out/rows.jsonl" <<'PY'
import json, re, sys
label, workload, run, log = sys.argv[1:5]
text = open(log).read()
m = re.search(r"probe: flushes (\d+) seconds ([0-9.]+)", text)
row = {"kernel": label, "workload": workload, "run": int(run), "flushes": int(m.group(1)), "seconds": float(m.group(2))}
t = re.search(r"^\s+time\s+([0-9.]+) s", text, re.M)
row["time"] = float(t.group(1)) if t else None
f = re.search(r"files\s+\d+ \([0-9.]+ MiB\), ([0-9.]+) files/s", text)
row["files_per_s"] = float(f.group(1)) if f else None
for what in ("file", "dir"):
    l = re.search(rf"fsync {what}\s+\d+ calls, mean ([0-9.]+ [mu]?s), p50 ([0-9.]+ [mu]?s), p90 [^,]+, p99 ([0-9.]+ [mu]?s)", text)
    if l:
        row[f"fsync_{what}"] = {"mean": l.group(1), "p50": l.group(2), "p99": l.group(3)}
print(json.dumps(row))
PY
}
: >"$out/rows.jsonl"
failed=0
for workload in synctest writers; do
  for r in $(seq 1 "$runs"); do
    run_one without "$without" "$workload" "$r" || failed=$((failed + 1))
    run_one with "$with" "$workload" "$r" || failed=$((failed + 1))
  done
done
python3 - "$out/rows.jsonl" "$without" "$with" >"$out/table.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
names = {"without": sys.argv[2], "with": sys.argv[3]}
print("| workload | kernel | runs | time (s), each run | files/s (synctest) | fsync of a file: mean, p50, p99 (synctest, each run) | data disk flushes, each run | flushes/s, median |")
print("|---|---|---:|---|---|---|---|---:|")
for workload in ("synctest", "writers"):
    for label in ("without", "with"):
        rs = [r for r in rows if r["workload"] == workload and r["kernel"] == label]
        if not rs:
            continue
        times = ", ".join(f"{r['time']:.2f}" if r["time"] is not None else "?" for r in rs)
        fps = ", ".join(f"{r['files_per_s']:.1f}" for r in rs if r["files_per_s"] is not None)
        lat = "; ".join(f"{r['fsync_file']['mean']}, {r['fsync_file']['p50']}, {r['fsync_file']['p99']}" for r in rs if "fsync_file" in r)
        fl = ", ".join(str(r["flushes"]) for r in rs)
        per_s = statistics.median(r["flushes"] / r["seconds"] for r in rs if r["seconds"] > 0)
        print(f"| {workload} | {label} the fix ({names[label]}) | {len(rs)} | {times} | {fps} | {lat} | {fl} | {per_s:.1f} |")
PY
cat "$out/table.md"
[ "$failed" = 0 ] || { echo "bench/f4/cost.sh: $failed runs could not run (logs in $out)" >&2; exit 1; }
