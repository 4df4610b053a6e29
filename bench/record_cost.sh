#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# record_cost.sh: what recording costs the server (the crash lab's
# recording: record=, POST /record/start). 4 KiB random-write IOPS at queue
# depth 16 (fio's nbd engine) on the journal export, no timing models, so
# the server's own CPU path, with a recording running against the same
# server under the same load not recording.
#
# Usage: bench/record_cost.sh [--plugin PATH] [--servers N] [--rounds N]
#                             [--window SECONDS] [--dir DIR] [--markdown FILE]
#
# Paired rounds on one running server and one fio run: a round is two
# windows of --window seconds back to back, one recording and one not,
# order alternating; --servers fresh servers, --rounds rounds each. A
# recording window starts once POST /record/start has answered and ends
# before POST /record/stop (the file is deleted after): it measures a
# running recording. Starting one pauses the exports while their starting
# contents are copied; that pause is reported on its own. A window's IOPS
# is the server's own write count of the journal export (GET /stats) over
# the window's time. The verdict is the median over all rounds of the ratio
# recording/not recording (target >= 0.95). The recordings' bytes per second
# (starting contents left out) and frames are reported too. --dir: the
# folder the recordings go to (default: the benchmark's own under /tmp);
# its filesystem decides what storing them costs.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
servers=2
rounds=15
window=2
markdown=""
dir=""
depth=16
span=48M
seed=20240601
target=0.95

bench_option --plugin plugin text
bench_option --servers servers count
bench_option --rounds rounds count
bench_option --window window count
bench_option --dir dir text
bench_option --markdown markdown text
bench_parse "$@"
((servers * rounds >= 2)) || bench_usage_error "--servers x --rounds: at least 2 paired rounds (for the quartiles)"
[[ -z $dir || -d $dir ]] || bench_usage_error "--dir $dir: not a folder"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio python3

source "$script_dir/lib/server.sh"
bench_init record_cost

# The rounds against one server, through its control socket: prints
# "MODE ROUND IOPS BYTES_PER_S FRAMES" per window (bytes and frames of the
# recording, 0 when not recording).
cat >"$tmp/rounds.py" <<'EOF'
import json, os, socket, sys, time

def call(sock, method, target):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(sock)
        s.sendall(f"{method} {target} HTTP/1.1\r\nHost: lab\r\nContent-Length: 0\r\n\r\n".encode())
        parts = []
        while chunk := s.recv(65536):
            parts.append(chunk)
    answer = b"".join(parts)
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200 "):
        sys.exit(f"{method} {target}: {answer[:200]!r}")
    return json.loads(body)

def writes(sock):
    journal = call(sock, "GET", "/stats")["exports"].get("journal")
    if journal is None:
        sys.exit("GET /stats: no journal export")
    return journal["ops"]["write"]["count"]

sock, folder, rounds, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
for r in range(1, rounds + 1):
    for recording in ((True, False) if r % 2 else (False, True)):
        path = os.path.join(folder, f"round{r}.nvjrec")
        started = 0.0
        if recording:
            t = time.monotonic()
            call(sock, "POST", "/record/start?file=" + path)
            started = time.monotonic() - t
        n0, t0 = writes(sock), time.monotonic()
        time.sleep(window)
        n1, t1 = writes(sock), time.monotonic()
        status = call(sock, "POST", "/record/stop") if recording else None
        if status is not None:
            if status["error"] is not None:
                sys.exit(f"the recording stopped early: {status['error']}")
            os.unlink(path)
        rate = (status["bytes_written"] - status["base_bytes"]) / (t1 - t0 + started) if status else 0
        print(f"{'recording' if recording else 'off'} {r} {(n1 - n0) / (t1 - t0):.0f} {rate:.0f} "
              f"{status['frames'] if status else 0} {started * 1000:.1f}", flush=True)
EOF

results="$tmp/results.tsv"
: >"$results"
ramp=3
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
echo "record_cost: plugin $plugin"
echo "record_cost: $servers server(s) x $rounds round(s) x {recording, not}, ${window} s windows, depth $depth" \
  "(~$((servers * (ramp + rounds * 2 * window + 3))) s)"
recordings=$tmp/recordings
if [[ -n $dir ]]; then
  recordings=$(mktemp -d "$(cd "$dir" && pwd)/record_cost.XXXXXX")
  trap 'rm -rf "$recordings"; bench_cleanup' EXIT
fi
mkdir -p "$recordings"
for ((s = 1; s <= servers; s++)); do
  bench_start nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" data=256M journal=64M \
    data-model=none journal-model=none "control=$tmp/control.sock"
  fio --name=randwrite --ioengine=nbd --uri="nbd+unix:///journal?socket=$tmp/s.sock" --rw=randwrite --bs=4k \
      --iodepth="$depth" --numjobs=1 --size="$span" --time_based --runtime=$((ramp + rounds * 2 * window + 30)) \
      --randrepeat=1 --randseed="$seed" --output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" &
  fio_pid=$!
  sleep "$ramp"
  python3 "$tmp/rounds.py" "$tmp/control.sock" "$recordings" "$rounds" "$window" >"$tmp/rounds.out" ||
    bench_fail "the rounds failed (server $s)"
  kill -0 "$fio_pid" 2>/dev/null || { cat "$tmp/fio.err" >&2; bench_fail "fio ended early (server $s)"; }
  stop_fio
  bench_stop
  awk -v s="$s" '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s, $1, $2, $3, $4, $5, $6 }' "$tmp/rounds.out" >>"$results"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

git_rev=$(bench_git_rev)
RC_RESULTS=$results RC_MARKDOWN=$markdown RC_COMMAND=$command_line RC_TARGET=$target \
RC_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') RC_NBDKIT=$(nbdkit --version | head -n1) RC_FIO=$(fio --version | head -n1) \
RC_GIT=$git_rev RC_PLUGIN=$plugin RC_REPO=$repo_dir \
RC_SETUP="recordings in $(df --output=fstype "$recordings" | tail -n1) ($(cd "$recordings/.." && pwd)); nbdkit nvjournal data=256M journal=64M data-model=none journal-model=none control=PATH (ext4 with its journal on the journal export, statistics and journal tracing on, nbdkit default threads); fio --ioengine=nbd --rw=randwrite --bs=4k --iodepth=$depth --numjobs=1 --size=$span --time_based --randrepeat=1 --randseed=$seed on the journal export, running through all of a server's rounds after ${ramp} s of ramp; $servers fresh servers x $rounds rounds of two ${window} s windows, one recording (POST /record/start at its start, /record/stop at its end) and one not, order alternating; a window's IOPS from the server's write count of the journal export read at both of its ends" \
RC_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, statistics, subprocess

env = os.environ
target = float(env["RC_TARGET"])
iops, rates, frames, starts = {}, [], [], []
for line in open(env["RC_RESULTS"]):
    server, mode, rnd, value, rate, n, start_ms = line.split("\t")
    iops[(int(server), mode, int(rnd))] = float(value)
    if mode == "recording":
        rates.append(float(rate))
        frames.append(int(n))
        starts.append(float(start_ms))
keys = sorted({(s, r) for s, _, r in iops})
modes = ("recording", "off")
samples = {m: [iops[(s, m, r)] for s, r in keys] for m in modes}
median = {m: statistics.median(v) for m, v in samples.items()}
spread = {m: (max(v) - min(v)) / median[m] * 100 for m, v in samples.items()}
paired = [iops[(s, "recording", r)] / iops[(s, "off", r)] for s, r in keys]
ratio = statistics.median(paired)
q = statistics.quantiles(paired, n=4)
servers = sorted({s for s, _ in keys})
per_server = [statistics.median(iops[(s, "recording", r)] / iops[(s, "off", r)] for ss, r in keys if ss == s)
              for s in servers]
verdict = "PASS" if ratio >= target else "FAIL"
mib_s = statistics.median(rates) / (1 << 20)

print()
for m in modes:
    print(f"{m:<10} median IOPS {median[m]:>8.0f}  spread {spread[m]:.1f}%")
print(f"ratio recording/off: {ratio:.3f} (median of {len(paired)} paired rounds; quartiles {q[0]:.3f} .. {q[2]:.3f})"
      f"  {verdict} (target >= {target}); per server " + ", ".join(f"{r:.3f}" for r in per_server))
print(f"recordings: median {mib_s:.1f} MiB/s written, {statistics.median(frames):.0f} frames per window;"
      f" starting one paused the exports for {statistics.median(starts):.0f} ms (median)")

path = env["RC_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## record_cost",
    "",
    "What the crash lab's recording costs the server: 4 KiB random-write IOPS at queue depth 16 on the journal"
    " export with a recording running, against the same server under the same load not recording."
    f" Target: recording/off >= {target}.",
    "",
    f"- Command: `{env['RC_COMMAND']}`",
    f"- Date: {env['RC_DATE']}",
    f"- nbdkit: {env['RC_NBDKIT']}; {env['RC_FIO']}",
    f"- Git commit: {env['RC_GIT']}",
    f"- Plugin: `{os.path.relpath(env['RC_PLUGIN'], env['RC_REPO'])}`",
    f"- Setup: {env['RC_SETUP']}",
    f"- Load average (1/5/15 min): {env['RC_LOAD']}",
    "",
    "| mode | median IOPS | spread (max-min)/median | windows |",
    "|---|---:|---:|---:|",
]
for m in modes:
    lines.append(f"| {m} | {median[m]:.0f} | {spread[m]:.1f}% | {len(samples[m])} |")
lines += [
    "",
    "| IOPS recording/off (median of paired rounds) | quartiles of the paired ratios | per server | target | verdict |",
    "|---:|---|---|---:|---|",
    f"| {ratio:.3f} | {q[0]:.3f} .. {q[2]:.3f} | " + ", ".join(f"{r:.3f}" for r in per_server)
    + f" | >= {target} | {verdict} |",
    "",
    f"The recordings took {mib_s:.1f} MiB/s (median of the recording windows, the starting contents left out) and"
    f" {statistics.median(frames):.0f} frames per window. Starting one paused the exports for"
    f" {statistics.median(starts):.0f} ms (median; max {max(starts):.0f} ms) while their starting contents were"
    " copied: the windows start after that.",
]
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "record_cost", path],
               input=section, text=True, check=True)
EOF
