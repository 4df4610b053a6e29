#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/f4/table.sh: F4's table (docs/findings/F4-stale-data-external-journal.md).
# bench/f4/workload.sh run by nvj crash run on each kernel (this host's, or
# a guest's with --vm --kernel), each layout and each commit path, every
# crash state of each recording checked (up to --max-states, a sample over
# every point), the failing ones mounted by this host's kernel too. One row
# per run: the states, the failing ones, how many of those show the old
# data in f (violation "stale" on d/f) and nothing else, whether the kernel
# agreed on every one it mounted, and what the first failing state's
# minimized cause dropped.
#
# Usage: bench/f4/table.sh [--nvj PATH] [--kernel K]... [--layout L]... [--path P]... [--runs N]
#          [--max-states N] --out DIR [--markdown FILE]
#   --kernel   host (this host's kernel, the default) or what nvj crash run
#              --vm --kernel takes: debian:SUITE, a folder a kernel was built in
#   --layout   default (the journal on the NVRAM export, 1 KiB blocks),
#              4k, inside (fs-journal=internal:8M), nodioread_nolock,
#              data-journal, data-writeback, ssd-journal (the journal on
#              the ssd model, its volatile cache on); default: default
#   --path     periodic, fsync-other, fsync-dir, sync (workload.sh);
#              default: periodic
#   --runs     runs of each combination (default 1)
# Exit 0 when every run ran (whatever it found), 1 when one could not, 2
# for bad input. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvj=${NVJ:-nvj}
kernels=() layouts=() paths=()
runs=1 max_states=20000 out="" markdown=""
usage() { echo "bench/f4/table.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nvj) nvj=${2:?}; shift 2 ;;
    --kernel) kernels+=("${2:?}"); shift 2 ;;
    --layout) layouts+=("${2:?}"); shift 2 ;;
    --path) paths+=("${2:?}"); shift 2 ;;
    --runs) runs=${2:?}; shift 2 ;;
    --max-states) max_states=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --markdown) markdown=${2:?}; shift 2 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[ -n "$out" ] || usage "--out DIR is required"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || usage "--runs takes a count from 1, not '$runs'"
[[ "$max_states" =~ ^[0-9]+$ ]] || usage "--max-states takes a count, not '$max_states'"
[ ${#kernels[@]} -gt 0 ] || kernels=(host)
[ ${#layouts[@]} -gt 0 ] || layouts=(default)
[ ${#paths[@]} -gt 0 ] || paths=(periodic)

# layout_params LAYOUT: the server's parameters; layout_options LAYOUT: what
# it adds to --mount-options.
layout_params() {
  local cache=(data=32M data-model=none data-write-cache=write-back data-rotational=yes)
  case "$1" in
    default|nodioread_nolock|data-journal|data-writeback) echo "${cache[*]} journal=8M" ;;
    4k) echo "${cache[*]} journal=8M fs-block-size=4096" ;;
    inside) echo "${cache[*]} fs-journal=internal:8M" ;;
    ssd-journal) echo "${cache[*]} journal=8M journal-model=ssd" ;;
    *) return 1 ;;
  esac
}
layout_options() {
  case "$1" in
    nodioread_nolock) echo ",nodioread_nolock" ;;
    data-journal) echo ",data=journal" ;;
    data-writeback) echo ",data=writeback" ;;
    *) echo "" ;;
  esac
}
for l in "${layouts[@]}"; do layout_params "$l" >/dev/null || usage "no layout '$l' (default, 4k, inside, nodioread_nolock, data-journal, data-writeback, ssd-journal)"; done
for p in "${paths[@]}"; do
  case "$p" in periodic|fsync-other|fsync-dir|sync) ;; *) usage "no commit path '$p' (periodic, fsync-other, fsync-dir, sync)" ;; esac
done
[ "$(id -u)" = 0 ] || usage "needs root (loop devices, mounts)"
command -v "$nvj" >/dev/null || usage "no nvj at '$nvj' (--nvj PATH)"
mkdir -p "$out"

failed_runs=0
rows="$out/rows.jsonl"
: >"$rows"
for k in "${kernels[@]}"; do
  for l in "${layouts[@]}"; do
    for p in "${paths[@]}"; do
      commit=1
      [ "$p" = periodic ] || commit=60
      options="commit=$commit$(layout_options "$l")"
      for r in $(seq 1 "$runs"); do
        dir="$out/$(echo "$k" | tr '/:' '__')/$l/$p/$r"
        rm -rf "$dir"
        mkdir -p "$(dirname "$dir")"
        vm=() mark=("$nvj" mark)
        if [ "$k" != host ]; then vm=(--vm --kernel "$k"); mark=(nvj-workload mark); fi
        status=0
        # shellcheck disable=SC2046 # the parameters are words
        "$nvj" crash run "${vm[@]}" --out "$dir" --verify failing --max-states "$max_states" \
          --mount-options "$options" $(layout_params "$l") -- \
          sh -c "$(cat "$here/workload.sh")" workload "$p" "${mark[@]}" >"$dir.log" 2>&1 || status=$?
        python3 - "$k" "$l" "$p" "$r" "$status" "$dir" "$dir.log" >>"$rows" <<'PY' || failed_runs=$((failed_runs + 1))
import json, os, re, sys
kernel, layout, path, run, status, folder, log = sys.argv[1:8]
row = {"kernel": kernel, "layout": layout, "path": path, "run": int(run), "status": int(status)}
results = os.path.join(folder, "results.json")
if int(status) not in (0, 1) or not os.path.exists(results):
    row["error"] = open(log).read()[-400:]
    print(json.dumps(row))
    sys.exit(1)
r = json.load(open(results))
v = r["verdicts"]
failing = [s for s in r["states"] if s["verdict"] != "pass"]
stale_alone = [s for s in failing
               if s.get("violations") and all(x["what"] == "stale" and x["path"] == "d/f" for x in s["violations"])]
judged = [s for s in failing if "ground_truth" in s]
after_fact = [s for s in r["states"] if (s.get("last_mark") or "").startswith("fact nostale d/f ")]
cause = next((s["cause"] for s in failing if s.get("cause", {}).get("found")), None)
version = re.search(r"== the guest.s kernel: ([^ ]+)", open(log).read())
row.update(states=v["checked"], after_fact=len(after_fact), failing=v["failing"], stale_alone=len(stale_alone),
           kernel_checked=len(judged), kernel_agreed=sum(1 for s in judged if s.get("agree")),
           cause=[(d["export"], d.get("region"), d["length"]) for d in cause["dropped"]] if cause else None,
           release=version.group(1) if version else None)
print(json.dumps(row))
PY
        tail -n 1 "$rows"
      done
    done
  done
done

"$here/render.py" "$rows" >"$out/table.md"
cat "$out/table.md"
[ -z "$markdown" ] || cp "$out/table.md" "$markdown"
[ "$failed_runs" = 0 ] || { echo "bench/f4/table.sh: $failed_runs runs could not run (see $out/*.log)" >&2; exit 1; }
