#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kernel_table.sh: the explorer on several kernels side by side, the
# evidence behind docs/findings/: one nvj crash explore --vm over every
# kernel of --kernels (a guest each, booted once for all its workloads;
# debian:SUITE names fetched into nvj's cache), and with --host the same
# workloads on this host's own kernel. For each kernel: its release and
# packages, the workloads explored, the unique crash states checked, the
# failing workloads; of those, the ones that fail in their final state too
# (the last crash point with states, every volatile write kept: what a clean
# unmount leaves), which no kernel can be blamed for: the oracle's own
# errors, counted apart; the
# others by the rule each broke (the first violation of its first failing
# state), and how many of them the kernel's own mount confirmed (a state the
# fast path failed, mounted by this host's kernel with the same facts read
# back; a finding it does not confirm is none); and, with --rule, which of
# that rule's workloads fail on which kernel. --from DIR summarizes what an
# earlier run left in its --out DIR again, exploring nothing. With --host yes
# and no --kernels, this host's kernel alone (no guest).
# Needs root (loop devices, mounts) and, for debian: names, Debian's archive
# or nvj's cache.
#
# Usage: bench/kernel_table.sh [--nvj PATH] [--kernels LIST] [--host yes] [--bound seq-1] [--ops LIST] [--workload LIST] [--fs ext4]
#          [--param PARAM=VALUE] [--mount-options O] [--promises posix|tested] [--max-states N] [--rule RULE]
#          [--cpus N] [--periodic-commit yes] [--title TEXT] [--out DIR]
#          [--markdown FILE]
#        bench/kernel_table.sh --from DIR [--rule RULE] [--title TEXT] [--markdown FILE]
#
# With --markdown the working tree must be clean: the section names the
# commit it was built from. --out keeps every exploration (recordings,
# reproducers) in DIR/vm and DIR/host. --cpus N boots each guest with N
# processors (nvj crash explore --cpus; default 1). --periodic-commit yes
# explores with nvj crash explore --periodic-commit (ext4).
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
kernels=""
host=""
bound=seq-1
ops=""
workload=""
fs=ext4
param=""
mount_options=""
max_states=""
promises=""
cpus=""
periodic_commit=""
rule=""
title=""
out=""
from=""
markdown=""
bench_option --nvj nvj text
bench_option --kernels kernels text
bench_option --host host text
bench_option --bound bound text
bench_option --ops ops text
bench_option --workload workload text
bench_option --fs fs text
bench_option --param param text
bench_option --mount-options mount_options text
bench_option --promises promises text
bench_option --max-states max_states count
bench_option --cpus cpus count
bench_option --periodic-commit periodic_commit text
bench_option --rule rule text
bench_option --title title text
bench_option --out out text
bench_option --from from text
bench_option --markdown markdown text
bench_parse "$@"
[[ -z $host || $host == yes ]] || bench_usage_error "--host $host: expected yes"
[[ -n $kernels || -n $host || -n $from ]] ||
  bench_usage_error "--kernels LIST (debian:sid,debian:experimental,...) or --host yes is required"
[[ -z $from || ( -z $kernels && -z $host && -z $out ) ]] ||
  bench_usage_error "--from DIR summarizes an earlier run: no --kernels, --host or --out with it"
[[ -z $from || -f $from/vm/kernels.json || -f $from/host/explore.json ]] ||
  bench_usage_error "--from $from: neither vm/kernels.json nor host/explore.json there (not a kernel_table.sh --out folder)"
[[ -z $cpus || -n $kernels ]] || bench_usage_error "--cpus $cpus: a guest's processors, and there is no guest without --kernels"
[[ -z $periodic_commit || $periodic_commit == yes ]] || bench_usage_error "--periodic-commit $periodic_commit: expected yes"
[[ -n $from || -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build)"
[[ -z $markdown ]] || bench_require_clean_tree

args=(--bound "$bound" --fs "$fs")
[[ -z $ops ]] || args+=(--ops "$ops")
[[ -z $workload ]] || args+=(--workload "$workload")
[[ -z $mount_options ]] || args+=(--mount-options "$mount_options")
[[ -z $promises ]] || args+=(--promises "$promises")
[[ -z $max_states ]] || args+=(--max-states "$max_states")
[[ -z $periodic_commit ]] || args+=(--periodic-commit)
[[ -z $param ]] || args+=("$param")
explore() {  # explore NAME ARGS...: nvj crash explore ARGS into DIR/NAME; exit 0 or 1 (findings) is a run
  local name=$1 status=0
  shift
  echo "== $name: nvj crash explore $* --out $dir/$name"
  "$nvj" crash explore "$@" --out "$dir/$name" >"$dir/$name.log" 2>&1 || status=$?
  tail -n 3 "$dir/$name.log"
  [[ $status == 0 || $status == 1 ]] || { tail -n 20 "$dir/$name.log" >&2; bench_fail "nvj crash explore ($name) exited $status"; }
}

if [[ -n $from ]]; then
  dir=$(cd "$from" && pwd)
  [[ ! -d $dir/host ]] || host=yes
else
  [[ $(id -u) == 0 ]] || bench_fail "needs root (nvj crash explore attaches loop devices and mounts)"
  bench_require python3
  [[ -z $kernels ]] || bench_require qemu-system-x86_64:qemu-system-x86
  nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
  if [[ -n $out ]]; then
    [[ ! -e $out ]] || bench_usage_error "--out $out exists: nothing already there is overwritten"
    mkdir -p "$out"
    dir=$(cd "$out" && pwd)
  else
    dir=$(mktemp -d /tmp/nvj-kernel-table-XXXXXX)
    trap 'rm -rf "$dir"' EXIT
  fi
  [[ -z $kernels ]] || explore vm --vm --kernel "$kernels" ${cpus:+--cpus "$cpus"} "${args[@]}"
  [[ -z $host ]] || explore host "${args[@]}"
  # What made the folder, for a later --from.
  echo "\`$command_line\` at commit $(bench_git_rev)" >"$dir/made-by.txt"
fi

KT_DIR=$dir KT_FROM=$from KT_HOST=$host KT_RULE=$rule KT_TITLE=$title KT_COMMAND=$command_line KT_MARKDOWN=$markdown \
  KT_REV=$(bench_git_rev) python3 - <<'PY'
import json, os, platform, time
d, rule = os.environ["KT_DIR"], os.environ["KT_RULE"]
columns = []  # (label, explore.json, its folder)
table = json.load(open(f"{d}/vm/kernels.json")) if os.path.exists(f"{d}/vm/kernels.json") else {"kernels": []}
for k in table["kernels"]:
    package = next((p for p in k["packages"] if p["name"].startswith("linux-binary-")), None) or \
        next((p for p in k["packages"] if p["name"].startswith("linux-image-") and p["name"] != "linux-image-amd64"), None)
    label = f"{k['name']} ({k['version']}" + (f", {package['version']}" if package else "") + ")"
    columns.append((label, f"{d}/vm/{k['version']}"))
if os.environ["KT_HOST"]:
    columns.append((f"this host ({platform.release()})", f"{d}/host"))

def states(folder, w):
    return json.load(open(f"{folder}/workloads/{w['ordinal']}/results.json"))["states"]

def confirmed(checked):
    """Whether the kernel's own mount failed one of the workload's states too."""
    return any(s.get("ground_truth", {}).get("verdict", "pass") != "pass" for s in checked)

def fails_at_the_end(checked):
    """Whether the state a clean unmount leaves fails: at the last crash point
    with states, the one that drops nothing (every volatile change kept)."""
    last = max(s["point"] for s in checked)
    return any(s["verdict"] != "pass" for s in checked if s["point"] == last and s["kept"] == s["volatile"])

rows, by_rule, rules = [], {}, set()
for label, folder in columns:
    e = json.load(open(f"{folder}/explore.json"))
    failing, own = [], 0
    for w in (w for w in e["workloads"] if w["failing"] > 0):
        checked = states(folder, w)
        if fails_at_the_end(checked):
            own += 1
        else:
            failing.append((w, confirmed(checked)))
    counts = {}
    for w, _ in failing:
        v = (w["failures"][0].get("violations") or [{}])[0]
        counts[v.get("rule", w["failures"][0]["verdict"])] = counts.get(v.get("rule", w["failures"][0]["verdict"]), 0) + 1
    rules |= set(counts)
    conf = sum(c for _, c in failing)
    rows.append((label, e["explored"], e["states"], len(failing) + own, own, counts, conf, e["errors"]))
    if rule:
        by_rule[label] = {w["name"]: w["failing"] for w, _ in failing
                          if any(v.get("rule") == rule for f in w["failures"] for v in f.get("violations", []))}

e0 = json.load(open(f"{columns[0][1]}/explore.json"))
lines = []
if os.environ["KT_TITLE"]:
    lines += [f"## {os.environ['KT_TITLE']}", ""]
made_by = f"{d}/made-by.txt"
lines += [f"- Command: `{os.environ['KT_COMMAND']}`"] + \
         ([f"- Explored by: {open(made_by).read().strip()}"] if os.environ["KT_FROM"] and os.path.exists(made_by) else []) + [
          f"- Date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
          f"- Git commit: {os.environ['KT_REV']}",
          f"- Explored: {e0['bound']}" + (f" of {', '.join(e0['ops'])}" if e0["ops"] else "") +
          f", {e0['filesystem']}" + (f" ({e0['mount_options']})" if e0["mount_options"] else "") +
          (", --periodic-commit" if e0.get("periodic_commit") else "") +
          f", {e0['workloads_in_bound']} workloads; parameters {' '.join(e0['parameters'])}" +
          (f"; guest processors {table.get('guest_cpus', 1)}" if table["kernels"] else ""), ""]
rule_list = sorted(rules)
lines.append("| kernel | workloads | unique crash states | failing workloads | the oracle's own (fail in the final state) | " +
             " | ".join(f"by `{r}`" for r in rule_list) + (" | " if rule_list else "") +
             "of those, confirmed by the kernel | could not run |")
lines.append("|---|---:|---:|---:|---:|" + "---:|" * len(rule_list) + "---:|---:|")
for label, explored, checked, failing, own, counts, conf, errors in rows:
    lines.append(f"| {label} | {explored} | {checked} | {failing} | {own} | " +
                 " | ".join(str(counts.get(r, 0)) for r in rule_list) + (" | " if rule_list else "") + f"{conf} | {errors} |")
if rule:
    names = sorted({n for m in by_rule.values() for n in m})
    lines += ["", f"The workloads breaking `{rule}` ({len(names)}), failing states on each kernel (- : passes):", "",
              "| workload | " + " | ".join(l for l, _ in columns) + " |", "|---|" + "---:|" * len(columns)]
    for n in names:
        lines.append(f"| `{n}` | " + " | ".join(str(by_rule[l].get(n, "-")) for l, _ in columns) + " |")
text = "\n".join(lines) + "\n"
print(text, end="")
if os.environ["KT_MARKDOWN"]:
    with open(os.environ["KT_MARKDOWN"], "a") as f:
        f.write("\n" + text)
PY
