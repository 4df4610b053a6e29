#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# How long a whole bound takes on N nodes at the rate one node measured, and
# the job array that runs it (crash-explore.sbatch: each task resumable, so
# a preempted or failed task is requeued and goes on where it stopped):
#
#   explore-time.sh --nodes N --rate-from RUN/explore.json [--margin PCT] [EXPLORE OPTION]...
#
# RUN/explore.json is one run's, on one node: an unsharded run or one
# shard's, never a merge (a merge's time is its slowest shard's). Its rate
# is its workloads explored over its seconds. The EXPLORE OPTIONs name the
# bound as nvj crash explore takes them (--bound seq-2 --ops LIST, ...):
# the workloads are counted by nvj crash explore --list. It prints the
# count, the rate, the time on one node and on N, and the sbatch line with
# --time: the estimate and MARGIN percent more (25 by default), at least 10
# minutes. NVJ names the nvj to run (default: nvj in PATH).
set -euo pipefail
usage() { echo "usage: explore-time.sh --nodes N --rate-from RUN/explore.json [--margin PCT] [EXPLORE OPTION]..." >&2; exit 2; }
nodes="" from="" margin=25
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:-}; shift 2 || usage ;;
    --rate-from) from=${2:-}; shift 2 || usage ;;
    --margin) margin=${2:-}; shift 2 || usage ;;
    *) break ;;
  esac
done
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "explore-time.sh: --nodes '$nodes': expected a whole number from 1" >&2; usage; }
[[ $margin =~ ^[0-9]+$ ]] || { echo "explore-time.sh: --margin '$margin': expected a whole number of percent" >&2; usage; }
[ -f "$from" ] || { echo "explore-time.sh: --rate-from '$from': no such file" >&2; usage; }
count=$("${NVJ:-nvj}" crash explore --list "$@" | wc -l)
[ "$count" -gt 0 ] || { echo "explore-time.sh: nvj crash explore --list $* lists no workload" >&2; exit 2; }
python3 - "$from" "$count" "$nodes" "$margin" "$*" <<'PY'
import json, math, sys
path, count, nodes, margin, options = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    run = json.load(open(path))
    explored, seconds = run["explored"], run["seconds"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"explore-time.sh: --rate-from {path}: not an explore.json ({e})")
if explored == 0 or seconds <= 0:
    sys.exit(f"explore-time.sh: --rate-from {path}: no workload explored, no rate")
rate = explored / seconds
def span(s):
    return f"{s / 3600:.1f} h" if s >= 5400 else f"{s / 60:.1f} min" if s >= 90 else f"{s:.0f} s"
one = count / rate
each = math.ceil(count / nodes) / rate
limit = max(600, math.ceil(each * (1 + margin / 100) / 60) * 60)
print(f"{count} workloads; {rate:.2f} workloads/s on one node ({path}: {explored} in {seconds:.1f} s)")
print(f"one node: {span(one)}; {nodes} nodes: {span(each)} each")
print(f"sbatch --parsable --array=0-{nodes - 1} --time={limit // 3600:02d}:{limit % 3600 // 60:02d}:00 "
      f"deploy/slurm/crash-explore.sbatch OUT {options}".rstrip())
PY
