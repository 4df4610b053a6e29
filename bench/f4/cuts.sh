#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/f4/cuts.sh: F4 under real power cuts, apart from the crash-state
# enumeration. Each cut is one nvj vm --crash: a guest boots the kernel,
# runs bench/f4/workload.sh (periodic: old data freed, f written back by
# the background writeback, the periodic commit), the power is cut as soon
# as it exits (what the data disk had not made durable is lost, by
# --policy), and a second boot of the same kernel mounts the filesystem,
# its journal replayed by that kernel, and reads f. Each cut's f is one of:
# old (lines of the deleted file's data in it), zeros, f (its own bytes
# only), other (anything else: a size or a mix the check names).
#
# Usage: bench/f4/cuts.sh [--nvj PATH] --kernel K [--cuts N] [--model cache|hdd] [--policy all|random]
#          --out DIR
#   --model  the data disk: cache (a write cache that holds writes until a
#            flush; the default) or hdd (the hdd model, which also writes
#            its cache home while idle, as a drive does)
# Prints one line per cut and the counts; exit 0 when every cut ran, 1 when
# one could not, 2 for bad input.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvj=${NVJ:-nvj}
kernel="" cuts=20 model=cache policy=all out=""
usage() { echo "bench/f4/cuts.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nvj) nvj=${2:?}; shift 2 ;;
    --kernel) kernel=${2:?}; shift 2 ;;
    --cuts) cuts=${2:?}; shift 2 ;;
    --model) model=${2:?}; shift 2 ;;
    --policy) policy=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[ -n "$kernel" ] || usage "--kernel K is required (debian:SUITE, a folder a kernel was built in)"
[ -n "$out" ] || usage "--out DIR is required"
[[ "$cuts" =~ ^[1-9][0-9]*$ ]] || usage "--cuts takes a count from 1, not '$cuts'"
case "$model" in
  cache) params=(data-model=none data-write-cache=write-back data-rotational=yes) ;;
  hdd) params=(data-model=hdd) ;;
  *) usage "no model '$model' (cache or hdd)" ;;
esac
case "$policy" in all|random) ;; *) usage "no policy '$policy' (all or random)" ;; esac
[ "$(id -u)" = 0 ] || usage "needs root"
mkdir -p "$out"
# The second boot's check: what f holds.
check='n=$(grep -c "OLD DATA OF A DELETED FILE" d/f || true)
if [ "$n" != 0 ]; then echo "f: old $n"; exit 0; fi
if ! tr -d "B" <d/f | grep -q .; then echo "f: f $(wc -c <d/f)"; exit 0; fi
if ! tr -d "\000" <d/f | grep -q .; then echo "f: zeros $(wc -c <d/f)"; exit 0; fi
echo "f: other $(wc -c <d/f)"'
failed=0
for i in $(seq 1 "$cuts"); do
  log="$out/cut-$i.log"
  status=0
  "$nvj" vm --crash --policy "$policy" --seed "$i" --kernel "$kernel" --mount-options commit=1 \
    data=32M journal=8M "${params[@]}" -- sh -c "$(cat "$here/workload.sh")" workload periodic true \
    --then sh -c "$check" >"$log" 2>&1 || status=$?
  seen=$(grep -m 1 -E '^f: (old|f|zeros|other)' "$log" || true)
  if [ "$status" != 0 ] || [ -z "$seen" ]; then
    echo "cut $i: could not run (exit $status): $(tail -n 2 "$log" | tr '\n' ' ')"
    failed=$((failed + 1))
    continue
  fi
  echo "cut $i: $seen"
  echo "$seen" >>"$out/outcomes"
done
echo "$kernel, data disk $model, policy $policy: $cuts cuts"
[ ! -f "$out/outcomes" ] || awk '{ n[$2]++ } END { for (k in n) printf "  f %s: %d\n", k, n[k] }' "$out/outcomes" | sort
[ "$failed" = 0 ] || { echo "$failed cuts could not run (logs in $out)" >&2; exit 1; }
