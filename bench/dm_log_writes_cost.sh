#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dm_log_writes_cost.sh: what recording every write costs a server, nvjournal's
# recording (record=) against the peer that writes dm-log-writes logs from
# user space, QEMU's blklogwrites driver under qemu-nbd, on the same load: 4 KiB
# random writes at queue depth 16 (fio's nbd engine) over a Unix socket, each
# server's storage and its log in tmpfs, each measured recording and not, in
# the same run.
#
# Usage: bench/dm_log_writes_cost.sh [--plugin PATH] [--rounds N] [--runtime SECONDS]
#                                    [--dir DIR] [--markdown FILE]
#
# A round runs four configurations, a fresh server for each, in an order that
# rotates from round to round: qemu-nbd serving a raw file (driver=file),
# qemu-nbd with blklogwrites over it (log-sector-size 512), nvjournal in
# memory without timing models, and nvjournal recording from the start into a
# file. Each is one fio run of --runtime seconds. Reported per configuration:
# the median IOPS; the ratio to the same server not recording (median of the
# per-round ratios); the server's CPU per write (utime + stime of its
# process over the run, from /proc), and for nvjournal the part of it spent
# in its recorder's thread (nvj-recorder) and in the serving threads; the
# log's bytes per write. --dir: the folder for the images and logs (default
# a new one in /dev/shm, which must be tmpfs).
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
rounds=5
runtime=5
dir=""
markdown=""
depth=16
size=256M
seed=20240601

bench_option --plugin plugin text
bench_option --rounds rounds count
bench_option --runtime runtime count
bench_option --dir dir text
bench_option --markdown markdown text
bench_parse "$@"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio python3 qemu-nbd:qemu-utils

source "$script_dir/lib/server.sh"
bench_init dm_log_writes_cost
if [[ -z $dir ]]; then
  [[ $(df --output=fstype /dev/shm | tail -n1) == tmpfs ]] || bench_fail "/dev/shm is not tmpfs: give --dir"
  dir=$(mktemp -d /dev/shm/dm_log_writes_cost.XXXXXX)
  trap 'bench_cleanup; rm -rf "$dir"' EXIT
fi
[[ -d $dir ]] || bench_usage_error "--dir $dir: not a folder"
qemu_pid=""

# cpu_ticks PID [THREAD]: utime + stime of the process, or of its threads
# named THREAD, in clock ticks.
cpu_ticks() {
  local pid=$1 name=${2:-} total=0 t
  if [[ -z $name ]]; then
    awk '{ print $14 + $15 }' "/proc/$pid/stat"
    return
  fi
  for t in /proc/"$pid"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == "$name" ]] || continue
    total=$((total + $(awk '{ print $14 + $15 }' "$t/stat")))
  done
  echo "$total"
}

# start CONFIG: a fresh server; sets uri, pid and the log file.
start() {
  rm -f "$dir"/img "$dir"/log "$dir"/s.sock
  log=""
  case $1 in
    qemu | qemu-log)
      truncate -s "$size" "$dir/img"
      local opts="driver=file,filename=$dir/img"
      if [[ $1 == qemu-log ]]; then
        : >"$dir/log"
        log=$dir/log
        opts="driver=blklogwrites,file.driver=file,file.filename=$dir/img,log.driver=file,log.filename=$log,log-sector-size=512"
      fi
      qemu-nbd --image-opts --persistent --shared=4 -x data -k "$dir/s.sock" "$opts" >"$tmp/qemu.log" 2>&1 &
      qemu_pid=$!
      local i
      for i in $(seq 100); do [[ -S $dir/s.sock ]] && break; sleep 0.05; done
      [[ -S $dir/s.sock ]] || { cat "$tmp/qemu.log" >&2; bench_fail "qemu-nbd did not start"; }
      pid=$qemu_pid
      uri="nbd+unix:///data?socket=$dir/s.sock"
      ;;
    nvj | nvj-record)
      local args=("$plugin" data=$size journal=1M fs=none data-model=none journal-model=none)
      if [[ $1 == nvj-record ]]; then
        log=$dir/log
        args+=(record="$log")
      fi
      bench_start nbdkit -U "$tmp/s.sock" -P "$tmp/s.pid" --foreground --exit-with-parent "${args[@]}"
      pid=$server_pid
      uri="nbd+unix:///data?socket=$tmp/s.sock"
      ;;
  esac
}

stop() {
  if [[ -n $qemu_pid ]]; then
    kill "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
    qemu_pid=""
  fi
  bench_stop
}
trap 'stop; bench_cleanup; [[ $dir == /dev/shm/dm_log_writes_cost.* ]] && rm -rf "$dir"' EXIT

run_fio() {
  local rc=0
  fio --name=randwrite --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=$depth --numjobs=1 \
    --size=$size --time_based --runtime="$runtime" --randrepeat=1 --randseed=$seed \
    --output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" &
  fio_pid=$!
  wait "$fio_pid" || rc=$?
  fio_pid=""
  [[ $rc == 0 ]] || { cat "$tmp/fio.err" "$tmp/fio.json" >&2; bench_fail "fio failed (rc=$rc)"; }
  python3 -c "
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index('{'):])['jobs'][0]
print(f\"{j['write']['iops']:.0f} {j['write']['total_ios']}\")" "$tmp/fio.json"
}

results=$tmp/results.tsv
: >"$results"
configs=(qemu qemu-log nvj nvj-record)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "dm_log_writes_cost: $rounds rounds x ${configs[*]}, ${runtime} s each, storage in $dir"
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < 4; k++)); do
    config=${configs[$(((k + round) % 4))]}
    start "$config"
    before=$(cpu_ticks "$pid") rec_before=$(cpu_ticks "$pid" nvj-recorder)
    read -r iops writes < <(run_fio)
    after=$(cpu_ticks "$pid") rec_after=$(cpu_ticks "$pid" nvj-recorder)
    bytes=0
    [[ -z $log ]] || bytes=$(stat -c %s "$log")
    stop
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$config" "$round" "$iops" "$writes" $((after - before)) \
      $((rec_after - rec_before)) "$bytes" >>"$results"
    printf '  round %d  %-10s %8s IOPS  %s ticks\n' "$round" "$config" "$iops" $((after - before))
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

DLW_RESULTS=$results DLW_MARKDOWN=$markdown DLW_COMMAND=$command_line DLW_GIT=$(bench_git_rev) \
DLW_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') DLW_TICK=$(getconf CLK_TCK) \
DLW_VERSIONS="$(nbdkit --version | head -n1); $(qemu-nbd --version | head -n1); $(fio --version)" \
DLW_SETUP="fio --ioengine=nbd --rw=randwrite --bs=4k --iodepth=$depth --numjobs=1 --size=$size --time_based --runtime=$runtime --randrepeat=1 --randseed=$seed over a Unix socket; qemu-nbd --image-opts --persistent --shared=4 driver=file (a sparse $size raw file) or driver=blklogwrites over it (log-sector-size=512); nbdkit nvjournal data=$size journal=1M fs=none data-model=none journal-model=none, record=FILE from the start; images, logs and recordings in $(df --output=fstype "$dir" | tail -n1); a fresh server per run, the order rotating per round" \
DLW_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs)" \
python3 - <<'PY'
import os, statistics, subprocess
env = os.environ
tick = 1e6 / float(env["DLW_TICK"])  # us per tick
rows = {}
for line in open(env["DLW_RESULTS"]):
    config, rnd, iops, writes, ticks, rec_ticks, size = line.split("\t")
    rows.setdefault(config, {})[int(rnd)] = dict(iops=float(iops), writes=int(writes), cpu=int(ticks) * tick,
                                                 rec=int(rec_ticks) * tick, bytes=int(size))
rounds = sorted(rows["qemu"])
med = lambda xs: statistics.median(xs)
def per_write(config, key):
    return med([r[key] / r["writes"] for r in rows[config].values()])
iops = {c: med([r["iops"] for r in rows[c].values()]) for c in rows}
ratio = {
    "qemu-log": med([rows["qemu-log"][n]["iops"] / rows["qemu"][n]["iops"] for n in rounds]),
    "nvj-record": med([rows["nvj-record"][n]["iops"] / rows["nvj"][n]["iops"] for n in rounds]),
}
ahead = med([rows["nvj-record"][n]["iops"] / rows["qemu-log"][n]["iops"] for n in rounds])
names = {"qemu": "qemu-nbd", "qemu-log": "qemu-nbd + blklogwrites", "nvj": "nvjournal",
         "nvj-record": "nvjournal + record="}
lines = ["| server | median IOPS | recording / not | CPU per write (us) | of which the recorder's thread | log bytes per write |",
         "|---|---:|---:|---:|---:|---:|"]
for c in ("qemu", "qemu-log", "nvj", "nvj-record"):
    rec = per_write(c, "rec") if c == "nvj-record" else None
    lines.append(f"| {names[c]} | {iops[c]:.0f} | {ratio[c]:.3f} |" if c in ratio else f"| {names[c]} | {iops[c]:.0f} | - |")
    lines[-1] += f" {per_write(c, 'cpu'):.1f} | {'-' if rec is None else f'{rec:.1f}'} |"
    lines[-1] += f" {per_write(c, 'bytes'):.0f} |" if c in ratio else " - |"
extra_serving = per_write("nvj-record", "cpu") - per_write("nvj-record", "rec") - per_write("nvj", "cpu")
summary = (f"nvjournal recording runs at {ratio['nvj-record']:.3f} of itself not recording, blklogwrites at "
           f"{ratio['qemu-log']:.3f} of qemu-nbd; recording, nvjournal serves {ahead:.2f}x blklogwrites' IOPS "
           f"(median of the per-round ratios). Recording adds {per_write('nvj-record', 'cpu') - per_write('nvj', 'cpu'):.1f} us "
           f"of CPU per write to nvjournal: {per_write('nvj-record', 'rec'):.1f} us in the recorder's thread (writing the "
           f"frames to the file) and {extra_serving:.1f} us in the serving threads (each write's frame: its copy, its "
           f"crc32c, the recorder's lock); blklogwrites adds {per_write('qemu-log', 'cpu') - per_write('qemu', 'cpu'):.1f} us to qemu-nbd.")
print("\n".join(lines))
print(summary)
path = env["DLW_MARKDOWN"]
if path:
    section = "\n".join([
        "## dm_log_writes_cost", "",
        "What recording every write costs the server, nvjournal's recording against QEMU's blklogwrites (the dm-log-writes"
        " format, written by qemu-nbd) on the same load, each against itself not recording, in the same run.", "",
        f"- Command: `{env['DLW_COMMAND']}`", f"- Date: {env['DLW_DATE']}", f"- Versions: {env['DLW_VERSIONS']}",
        f"- Git commit: {env['DLW_GIT']}", f"- Setup: {env['DLW_SETUP']}", f"- Load average (1/5/15 min): {env['DLW_LOAD']}",
        "", *lines, "", summary, ""])
    subprocess.run(["python3", os.path.join(os.path.dirname(os.path.abspath(path)), "lib", "results_section.py"),
                    "dm_log_writes_cost", path], input=section, text=True, check=True)
PY
