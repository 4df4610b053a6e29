#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vm_host_root.sh: what `nvj vm --host-root` costs at boot: the time from
# QEMU's start to the command's start with the host's root shared over
# virtio-9p (its 9p modules loaded, the root mounted, tmpfs on its scratch
# folders, the chroot), against today's initramfs boot alone, in the same
# run (target: at most 1.5 times as long).
#
# Usage: bench/vm_host_root.sh [--nvj PATH] [--rounds N] [--markdown FILE]
#
# Each round boots the guest twice, once each way, the order alternating
# from round to round, on the same server parameters (the plugin's
# defaults: ext4, its journal on the NVRAM export), running `true` (the
# initramfs's busybox, or the host's /bin/true). The boot to the command is
# what nvj vm -v reports (its "kernel, modules and mount took"): from QEMU's
# start to the guest's marker before the command; the wall time of the
# whole nvj vm is reported too (it includes the server's start, the
# initramfs and the power-off). Reported: medians, and the median of the
# per-round ratios host-root/initramfs.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
rounds=5
markdown=""
target=1.5

bench_option --nvj nvj text
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build nvj)"
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require python3 qemu-system-x86_64:qemu-system-x86 nbdkit

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm_host_root.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# boot WAY: one nvj vm run; prints "boot-seconds wall-seconds".
boot() {
  local -a extra=()
  if [[ $1 == host-root ]]; then extra=(--host-root); fi
  local start end
  start=$(date +%s.%N)
  "$nvj" vm -v "${extra[@]}" -- true >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; bench_fail "nvj vm ${extra[*]} -- true failed"; }
  end=$(date +%s.%N)
  local took
  took=$(sed -nE 's/.*boot 1: kernel, modules and mount took ([0-9.]+) s.*/\1/p' "$tmp/err")
  [[ -n $took ]] || bench_fail "nvj vm -v did not say how long the boot took"
  echo "$took $(python3 -c "print(f'{$end - $start:.2f}')")"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
: >"$tmp/runs.tsv"
for ((round = 1; round <= rounds; round++)); do
  order="initramfs host-root"
  if ((round % 2 == 0)); then order="host-root initramfs"; fi
  for way in $order; do
    read -r took wall < <(boot "$way")
    printf '%s\t%s\t%s\t%s\n' "$round" "$way" "$took" "$wall" >>"$tmp/runs.tsv"
    printf '  round %d  %-10s boot to the command %5s s, nvj vm %6s s\n' "$round" "$way" "$took" "$wall"
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

VB_RUNS=$tmp/runs.tsv VB_MARKDOWN=$markdown VB_COMMAND=$command_line VB_TARGET=$target \
VB_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') VB_GIT=$(bench_git_rev) \
VB_QEMU="$(qemu-system-x86_64 --version | head -n1)" \
VB_CPU="$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) CPUs" \
VB_LOAD="$load_start at start, $load_end at end" BENCH_DIR=$script_dir python3 - <<'PY'
import os, statistics, subprocess
env = os.environ
target = float(env["VB_TARGET"])
runs = {}
for line in open(env["VB_RUNS"]):
    rnd, way, took, wall = line.split()
    runs[(way, int(rnd))] = (float(took), float(wall))
rounds = sorted({r for _, r in runs})
ways = ["initramfs", "host-root"]
med = {w: statistics.median(runs[(w, r)][0] for r in rounds) for w in ways}
wall = {w: statistics.median(runs[(w, r)][1] for r in rounds) for w in ways}
paired = [runs[("host-root", r)][0] / runs[("initramfs", r)][0] for r in rounds]
ratio = statistics.median(paired)
verdict = "PASS" if ratio <= target else "FAIL"
print()
for w in ways:
    print(f"{w:<10} boot to the command: median {med[w]:.2f} s; nvj vm: median {wall[w]:.2f} s")
print(f"host-root / initramfs: {ratio:.3f} (median of paired rounds: " + ", ".join(f"{x:.3f}" for x in paired)
      + f")  {verdict} (target <= {target})")
path = env["VB_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## vm_host_root",
    "",
    "What `nvj vm --host-root` costs at boot: QEMU's start to the command's start (nvj vm -v's \"kernel, modules and"
    " mount took\") with the host's root shared read-only over virtio-9p (9p modules, the root mounted, scratch tmpfs,"
    " chroot), against the initramfs alone, in the same run, both running `true` on the plugin's default server."
    f" Target: at most {target} times as long.",
    "",
    f"- Command: `{env['VB_COMMAND']}`",
    f"- Date: {env['VB_DATE']}",
    f"- Git commit: {env['VB_GIT']}",
    f"- Machine: {env['VB_CPU']}; {env['VB_QEMU']} (TCG)",
    f"- Order: initramfs first in odd rounds, host-root first in even ones; {len(rounds)} rounds",
    f"- Load average (1/5/15 min): {env['VB_LOAD']}",
    "",
    "| guest | boot to the command, median s | all rounds (s) | whole nvj vm, median s |",
    "|---|---:|---|---:|",
]
for w in ways:
    lines.append(f"| {w} | {med[w]:.2f} | " + ", ".join(f"{runs[(w, r)][0]:.1f}" for r in rounds) + f" | {wall[w]:.2f} |")
lines += ["", "| ratio host-root / initramfs (median of paired rounds) | paired rounds | target | verdict |",
          "|---:|---|---:|---|",
          f"| {ratio:.3f} | " + ", ".join(f"{x:.3f}" for x in paired) + f" | <= {target} | {verdict} |"]
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "vm_host_root", path],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
