#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vm_transport.sh: the NVRAM model's added latency as a guest sees it,
# through each of nvj vm's transports: scsi (QEMU's NBD client, the export a
# SCSI disk on virtio-scsi) and nbd (the guest kernel's NBD client over the
# guest's restricted network, forwarded by QEMU to the server's socket).
#
# Usage: bench/vm_transport.sh [--nvj PATH] [--plugin PATH] [--rounds N] [--writes N] [--model MODEL] [--markdown FILE]
#
# Each round boots the guest four times, once per transport and journal
# model (journal-model=nvram, the plugin's default, or --model's, and
# journal-model=none, which answers as fast as the store allows; --model
# nvram:write-latency=100us shows what a slower NVRAM adds), the order rotating from
# round to round, each on a server of its own started here (the plugin's
# defaults otherwise: ext4 on a 1 GiB disk model, its journal on a 64 MiB
# export), the filesystem mounted read-only (nothing writes the journal but
# the benchmark). In the guest, with this host's programs (--host-root),
# fio writes --writes blocks of 4 KiB one at a time (QD1, psync) with
# O_DIRECT|O_DSYNC, sequentially, to the journal export's block device
# (from 32 MiB on; the journal is clean and nothing else writes it) and reports
# completion latencies. The server's own view of the same writes (GET
# /stats: the journal export's write latency, arrival to reply) is read
# after each boot. Reported: per transport and model the medians over the
# rounds of the guest's p50, p99 and mean and of the server's p50, and per
# transport the NVRAM model's added latency: the median of the per-round
# differences nvram - none of the guest's p50 (and of the server's). Under
# TCG a write costs the guest some hundreds of microseconds, which vary
# from boot to boot by more than the default NVRAM's few: the rounds.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
rounds=5
writes=2000
model=nvram
markdown=""

bench_option --nvj nvj text
bench_option --plugin plugin text
bench_option --rounds rounds count
bench_option --writes writes count
bench_option --model model text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build nvj)"
[[ -f $plugin ]] || bench_fail "the plugin not found: $plugin (build it with ninja -C build nbdkit-nvjournal-plugin)"
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require python3 curl fio qemu-system-x86_64:qemu-system-x86 nbdkit
[[ -x /usr/sbin/nbd-client ]] || command -v nbd-client >/dev/null || bench_fail "nbd-client is not installed (nbd-client)"
[[ -z $markdown ]] || bench_require_clean_tree
source "$script_dir/lib/server.sh"
bench_init vm_transport

# The guest's command: fio on the journal export's device, its JSON on
# standard output.
guest_fio='exec fio --name=journal --filename="$NVJ_JOURNAL_DEV" --rw=write --bs=4k --direct=1 --sync=dsync \
  --ioengine=psync --iodepth=1 --offset=32M --size=16M --number_ios='"$writes"' --output-format=json'

# one TRANSPORT MODEL: one boot on a server of its own; writes "guest-p50
# guest-p99 guest-mean server-p50" in microseconds to $tmp/result.
one() {
  local transport=$1 model=$2
  rm -f "$tmp/s.ctl"
  bench_start nbdkit --foreground --exit-with-parent -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" \
    "journal-model=$model" "control=$tmp/s.ctl"
  "$nvj" vm -v --transport "$transport" --socket "$tmp/s.sock" --control "$tmp/s.ctl" --host-root \
    --mount-options ro -- sh -c "$guest_fio" >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/out" "$tmp/err" >&2; bench_fail "nvj vm --transport $transport (journal-model=$model) failed"; }
  curl -sf --unix-socket "$tmp/s.ctl" http://lab/stats >"$tmp/stats.json" || bench_fail "GET /stats failed"
  bench_stop
  [[ -s $tmp/kernel ]] || sed -nE 's/^nvj vm: kernel ([^ ]+) .*/\1/p' "$tmp/err" >"$tmp/kernel"
  python3 - "$tmp/out" "$tmp/stats.json" "$writes" >"$tmp/result" <<'PY' || bench_fail "no latencies from the guest"
import json, sys
text = open(sys.argv[1]).read()
fio = json.loads(text[text.index("{"):text.rindex("}") + 1])
w = fio["jobs"][0]["write"]
if w["total_ios"] < int(sys.argv[3]) or fio["jobs"][0]["error"]:
    raise SystemExit(f"fio wrote {w['total_ios']} blocks of {sys.argv[3]}, error {fio['jobs'][0]['error']}")
clat = w["clat_ns"]
journal = json.load(open(sys.argv[2]))["exports"]["journal"]["ops"]["write"]
print(f"{clat['percentile']['50.000000'] / 1e3:.1f} {clat['percentile']['99.000000'] / 1e3:.1f} "
      f"{clat['mean'] / 1e3:.1f} {journal['latency_us']['p50']:.1f}")
PY
}

ways=("scsi $model" "scsi none" "nbd $model" "nbd none")
: >"$tmp/kernel"
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
: >"$tmp/runs.tsv"
for ((round = 1; round <= rounds; round++)); do
  for ((i = 0; i < ${#ways[@]}; i++)); do
    way=${ways[(i + round - 1) % ${#ways[@]}]}
    read -r transport journal_model <<<"$way"
    one "$transport" "$journal_model"
    read -r p50 p99 mean server <"$tmp/result"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$transport" "$journal_model" "$p50" "$p99" "$mean" "$server" \
      >>"$tmp/runs.tsv"
    printf '  round %d  %-4s journal-model=%-5s guest p50 %7s us, p99 %7s us, mean %7s us; server p50 %6s us\n' \
      "$round" "$transport" "$journal_model" "$p50" "$p99" "$mean" "$server"
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

VT_RUNS=$tmp/runs.tsv VT_MARKDOWN=$markdown VT_COMMAND=$command_line VT_WRITES=$writes VT_MODEL=$model \
VT_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') VT_GIT=$(bench_git_rev) \
VT_QEMU="$(qemu-system-x86_64 --version | head -n1)" VT_FIO="$(fio --version)" \
VT_NBD_CLIENT="$(dpkg-query -W -f='${Version}' nbd-client 2>/dev/null || echo unknown)" \
VT_KERNEL="$(cat "$tmp/kernel")" \
VT_CPU="$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) CPUs" \
VT_LOAD="$load_start at start, $load_end at end" BENCH_DIR=$script_dir python3 - <<'PY'
import os, statistics, subprocess
env = os.environ
runs = {}
for line in open(env["VT_RUNS"]):
    rnd, transport, model, p50, p99, mean, server = line.split()
    runs[(transport, model, int(rnd))] = tuple(map(float, (p50, p99, mean, server)))
rounds = sorted({r for *_, r in runs})
model = env["VT_MODEL"]
transports, models = ["scsi", "nbd"], [model, "none"]
med = lambda t, m, k: statistics.median(runs[(t, m, r)][k] for r in rounds)
added = {t: [runs[(t, model, r)][0] - runs[(t, "none", r)][0] for r in rounds] for t in transports}
added_server = {t: [runs[(t, model, r)][3] - runs[(t, "none", r)][3] for r in rounds] for t in transports}
print()
for t in transports:
    print(f"{t:<5} {model}'s added latency in the guest (p50, {model} - none): median {statistics.median(added[t]):.1f} us"
          f" (rounds: {', '.join(f'{x:.1f}' for x in added[t])}); at the server {statistics.median(added_server[t]):.1f} us")
path = env["VT_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## vm_transport",
    "",
    "The NVRAM model's added latency as a guest sees it through each of `nvj vm`'s transports: `scsi` (QEMU's NBD"
    " client, the export a SCSI disk on virtio-scsi) and `nbd` (the guest kernel's NBD client over the guest's"
    " restricted network, QEMU forwarding it to the server's Unix socket). In the guest (`--host-root`, the"
    f" filesystem mounted read-only), fio writes {env['VT_WRITES']} blocks of 4 KiB one at a time (QD1, psync,"
    f" O_DIRECT|O_DSYNC), sequentially, to the journal export's block device, with `journal-model={model}`"
    + (" (the plugin's default: 2 us a write, 2 GB/s)" if model == "nvram" else "")
    + " and with `journal-model=none`, each boot on a server of its own; the"
    " server's p50 is its own view of the same writes (GET /stats, the journal export's writes, arrival to reply)."
    f" Medians over the rounds; the added latency is the median of the per-round differences {model} - none.",
    "",
    f"- Command: `{env['VT_COMMAND']}`",
    f"- Date: {env['VT_DATE']}",
    f"- Git commit: {env['VT_GIT']}",
    f"- Machine: {env['VT_CPU']}; {env['VT_QEMU']} (TCG); guest kernel {env['VT_KERNEL']}; {env['VT_FIO']};"
    f" nbd-client {env['VT_NBD_CLIENT']}",
    f"- Order: the four boots of a round rotate from round to round; {len(rounds)} rounds",
    f"- Load average (1/5/15 min): {env['VT_LOAD']}",
    "",
    "| transport | journal model | guest p50 us | guest p99 us | guest mean us | server p50 us |",
    "|---|---|---:|---:|---:|---:|",
]
for t in transports:
    for m in models:
        lines.append(f"| {t} | {m} | {med(t, m, 0):.1f} | {med(t, m, 1):.1f} | {med(t, m, 2):.1f} | {med(t, m, 3):.1f} |")
lines += ["", f"| transport | {model}'s added latency in the guest, p50 us | per round | at the server, p50 us |",
          "|---|---:|---|---:|"]
for t in transports:
    lines.append(f"| {t} | {statistics.median(added[t]):.1f} | " + ", ".join(f"{x:.1f}" for x in added[t])
                 + f" | {statistics.median(added_server[t]):.1f} |")
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "vm_transport", path],
               input="\n".join(lines) + "\n", text=True, check=True)
PY
