#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# nvram_accuracy.sh: how exactly the server waits, and what the waits cost.
# For each NVRAM write latency L, 4 KiB writes at queue depth 1 to the journal
# export with journal-model=nvram:latency=L,bandwidth=0 against the same
# server with journal-model=none; the added p50 (with minus without) should
# be within max(2 us, 2% of L) of L.
#
# This machine's round trip drifts by several microseconds from one second
# to the next, so one comparison says little at 10 or 100 us. Each
# configuration is one server, kept for all of L's rounds, whose model is
# switched between none and the NVRAM model (POST /model) for short windows
# taken in pairs, the pair's order alternating; the figure is the median of
# the pairs' differences. Configurations, their turns rotating by round:
#   this      this build
#   before    the plugin built from the baseline commit
#   peer      build/bench/nbdkit-spin-plugin.so latency-ns=L (its export
#             "base" answers at once): a plugin that spins the whole wait and
#             does nothing else, the best a server on this machine can do for
#             the same latency
# each with nbdkit --threads=1 (one request in flight needs one worker) and a
# client that polls without sleeping (nvj bench --busy-poll), so that neither
# nbdkit's hand-off to a worker asleep in recv() nor the client's own wake-up
# is counted. Per window: the client's p50 and p99, the server's CPU time
# (user + system, /proc/PID/stat: its connection threads end with the
# connection, so their own counters are gone by then; in ticks, so the CPU
# per write is the sum over all windows over the writes in them), and for this build the server's own account
# (GET /stats after POST /reset-stats: how late replies left against the
# model, what the clock's waits did). Two more configurations of this build
# show what the model does not cause: nbdkit's default 16 workers, and a
# client that sleeps in poll(). The machine's steal time over the run is
# reported too.
#
# Usage: bench/nvram_accuracy.sh [--rounds N] [--window SECONDS] [--baseline REV] [--baseline-plugin PATH] [--markdown FILE]
#   --rounds N               pairs of windows per configuration and L (default 11)
#   --window SECONDS         one window (default 1)
#   --baseline REV           the commit the "before" plugin is built from
#                            (git worktree, RelWithDebInfo); default 0bc9a6e,
#                            the clock whose spin window was twice the mean
#                            lateness of its sleeps, one for every length
#   --baseline-plugin PATH   a plugin already built, instead
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
peer="$repo_dir/build/bench/nbdkit-spin-plugin.so"
nvj="$repo_dir/build/tools/nvj/nvj"
rounds=11
window=1
baseline=0bc9a6e
baseline_plugin=""
markdown=""
latencies=(10us 100us 1ms 10ms)

bench_option --rounds rounds count
bench_option --window window count
bench_option --baseline baseline text
bench_option --baseline-plugin baseline_plugin text
bench_option --markdown markdown text
bench_parse "$@"
for f in "$plugin" "$peer" "$nvj"; do [[ -f $f ]] || bench_fail "$f is missing (ninja -C build)"; done
bench_require nbdkit python3 curl git cmake ninja
source "$repo_dir/tests/support/nbdkit.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvram_accuracy.XXXXXX")
declare -A pids=()
stop_servers() {
  local name
  for name in "${!pids[@]}"; do nbdkit_stop "${pids[$name]}" 60 || true; done
  pids=()
}
cleanup() {
  stop_servers
  git -C "$repo_dir" worktree remove --force "$tmp/src" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n $baseline_plugin ]]; then
  [[ -f $baseline_plugin ]] || bench_fail "no plugin at --baseline-plugin $baseline_plugin"
  before=$baseline_plugin
  baseline="(given)"
else
  echo "nvram_accuracy: building the plugin at $baseline"
  git -C "$repo_dir" worktree add --detach -q "$tmp/src" "$baseline"
  cmake -S "$tmp/src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVJ_BUILD_TESTS=OFF >/dev/null
  nice ninja -C "$tmp/build" nbdkit-nvjournal-plugin >"$tmp/build.log" 2>&1 ||
    { tail -n 20 "$tmp/build.log"; bench_fail "the baseline did not build"; }
  before=$tmp/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so
fi

ticks=$(getconf CLK_TCK)
# cpu_ticks PID: user + system time of the process, its ended threads included.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
steal() { awk '/^cpu /{ print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# serve NAME THREADS PLUGIN ARGS...: a server on $tmp/NAME.sock (control
# socket $tmp/NAME.ctl for our plugin), kept in pids[NAME].
serve() {
  local name=$1 threads=$2; shift 2
  rm -f "$tmp/$name.sock" "$tmp/$name.ctl"
  nbdkit_start "$tmp/$name.pid" "$tmp/$name.log" nbdkit --foreground --threads="$threads" -U "$tmp/$name.sock" \
    -P "$tmp/$name.pid" "$@" || bench_fail "the $name server did not start"
  pids[$name]=$NBDKIT_PID
}

# control NAME METHOD TARGET: a request to NAME's control socket.
control() {
  curl -sf -X "$2" --unix-socket "$tmp/$1.ctl" "http://nvj$3" >"$tmp/answer.json" ||
    bench_fail "$2 $3 on the $1 server failed: $(cat "$tmp/answer.json" 2>/dev/null)"
}

# measure ROW SERVER EXPORT STATS BENCH-OPTIONS...: one window of nvj bench
# on SERVER's EXPORT, one line of results named ROW (with the server's
# GET /stats when STATS is "stats").
measure() {
  local row=$1 name=$2 export=$3 stats=$4; shift 4
  local pid=${pids[$name]} cpu0 cpu1
  [[ $stats != stats ]] || control "$name" POST /reset-stats
  cpu0=$(cpu_ticks "$pid")
  "$nvj" bench --json --duration "$window" --span 32M "$@" "nbd+unix:///$export?socket=$tmp/$name.sock" \
    >"$tmp/bench.json"
  cpu1=$(cpu_ticks "$pid")
  echo '{}' >"$tmp/stats.json"
  if [[ $stats == stats ]]; then control "$name" GET /stats && mv "$tmp/answer.json" "$tmp/stats.json"; fi
  python3 - "$L" "$round" "$row" "$((cpu1 - cpu0))" "$ticks" "$tmp/bench.json" "$tmp/stats.json" >>"$results" <<'PY'
import json, sys
L, rnd, row, cpu, ticks, bench, stats = sys.argv[1:]
b = json.load(open(bench))
s = json.load(open(stats))
out = {"L": L, "round": int(rnd), "row": row, "p50": b["latency_us"]["p50"], "p99": b["latency_us"]["p99"],
       "cpu_us": int(cpu) / int(ticks) * 1e6, "requests": b["requests"]}
if s:
    late = s["exports"]["journal"]["late_us"]
    out.update(late_p50=late["p50"], late_p99=late["p99"], waits=s["clock"]["waits"], slept=s["clock"]["slept"],
               woke_late=s["clock"]["woke_late"], spun_us=s["clock"]["spun_s"] * 1e6 / max(1, s["clock"]["waits"]))
print(json.dumps(out))
PY
}

# pair NAME SERVER BENCH-OPTIONS...: one window without the model (row
# NAME_base) and one with it (row NAME), in the order the round says.
pair() {
  local name=$1 server=$2; shift 2
  local first second
  if ((round % 2)); then first=base; else first=model; fi
  for side in $first $([[ $first == base ]] && echo model || echo base); do
    if [[ $server == peer ]]; then
      if [[ $side == base ]]; then measure "${name}_base" peer base no "$@"; else measure "$name" peer journal no "$@"; fi
    else
      local spec=none stats=no
      [[ $side == base ]] || { spec=$model; [[ $name != this ]] || stats=stats; }
      control "$server" POST "/model?export=journal&model=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$spec")"
      measure "$([[ $side == base ]] && echo "${name}_base" || echo "$name")" "$server" journal "$stats" "$@"
    fi
  done
}

results="$tmp/results.jsonl"
: >"$results"
read -r steal0 total0 < <(steal)
echo "nvram_accuracy: latencies ${latencies[*]}, $rounds rounds of paired ${window} s windows per configuration"
for L in "${latencies[@]}"; do
  model="nvram:latency=$L,bandwidth=0"
  ns=$(python3 -c 'import re,sys; m=re.fullmatch(r"([0-9.]+)(us|ms|s)", sys.argv[1]); print(int(float(m.group(1)) * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]))' "$L")
  serve this 1 "$plugin" journal=64M data-model=none journal-model=none "control=$tmp/this.ctl"
  serve before 1 "$before" journal=64M data-model=none journal-model=none "control=$tmp/before.ctl"
  serve peer 1 "$peer" "latency-ns=$ns"
  serve workers16 16 "$plugin" journal=64M data-model=none journal-model=none "control=$tmp/workers16.ctl"
  configs=("this this --busy-poll" "before before --busy-poll" "peer peer --busy-poll" "sleeping this"
           "workers16 workers16 --busy-poll")
  for ((round = 1; round <= rounds; round++)); do
    for ((i = 0; i < ${#configs[@]}; i++)); do
      # shellcheck disable=SC2086 # each entry is words without spaces
      pair ${configs[(i + round) % ${#configs[@]}]}
    done
  done
  stop_servers
  python3 - "$results" "$L" <<'PY'
import json, statistics, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r["L"] == sys.argv[2]]
def added(name):
    by = {}
    for r in rows:
        by.setdefault(r["round"], {})[r["row"]] = r["p50"]
    return statistics.median(v[name] - v[name + "_base"] for v in by.values())
print(f"  L={sys.argv[2]:<6} added p50: this {added('this'):9.2f} us, before {added('before'):9.2f}, "
      f"peer {added('peer'):9.2f}")
PY
done
read -r steal1 total1 < <(steal)

NA_RESULTS=$results NA_MARKDOWN=$markdown NA_COMMAND=$command_line NA_WINDOW=$window NA_ROUNDS=$rounds \
NA_BASELINE=$baseline NA_STEAL=$(python3 -c "print(100 * ($steal1 - $steal0) / max(1, $total1 - $total0))") \
NA_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') NA_GIT=$(bench_git_rev) \
BENCH_DIR=$script_dir python3 - <<'PY'
import json, os, re, statistics, subprocess
env = os.environ
units = {"us": 1, "ms": 1000, "s": 1e6}
def to_us(t):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", t)
    return float(m.group(1)) * units[m.group(2)]
rounds = {}
for r in map(json.loads, open(env["NA_RESULTS"])):
    rounds.setdefault(r["L"], {}).setdefault(r["round"], {})[r["row"]] = r
med = statistics.median
table = []
for L, by_round in rounds.items():
    rs = list(by_round.values())
    def added(name, field="p50"):
        return med([r[name][field] - r[name + "_base"][field] for r in rs])
    def cpu(name):  # CPU per write over all windows: the ticks are too coarse for one
        per = lambda row: sum(r[row]["cpu_us"] for r in rs) / max(1, sum(r[row]["requests"] for r in rs))
        return per(name) - per(name + "_base")
    def quartiles(name):
        q = statistics.quantiles([r[name]["p50"] - r[name + "_base"]["p50"] for r in rs], n=4)
        return q[0], q[2]
    target = to_us(L)
    t = dict(L=L, target=target, tol=max(2.0, 0.02 * target), this=added("this"), iqr=quartiles("this"),
             before=added("before"), peer=added("peer"),
             p99_this=added("this", "p99"), p99_before=added("before", "p99"), p99_peer=added("peer", "p99"),
             cpu_this=cpu("this"), cpu_before=cpu("before"), cpu_peer=cpu("peer"),
             late_p50=med([r["this"]["late_p50"] for r in rs]), late_p99=med([r["this"]["late_p99"] for r in rs]),
             woke_late=100 * sum(r["this"]["woke_late"] for r in rs) / max(1, sum(r["this"]["slept"] for r in rs)),
             slept=100 * sum(r["this"]["slept"] for r in rs) / max(1, sum(r["this"]["waits"] for r in rs)),
             spun=med([r["this"]["spun_us"] for r in rs]), many=added("workers16"), sleeping=added("sleeping"))
    t["verdict"] = "PASS" if abs(t["this"] - target) <= t["tol"] else "FAIL"
    table.append(t)
print()
for t in table:
    print(f"L={t['L']}: added p50 {t['this']:.2f} us (quartiles of the pairs {t['iqr'][0]:.2f} .. {t['iqr'][1]:.2f}), "
          f"error {t['this'] - t['target']:+.2f} us, allowed {t['tol']:.2f} us  {t['verdict']}; "
          f"before {t['before'] - t['target']:+.2f} us, peer {t['peer'] - t['target']:+.2f} us; "
          f"server late p50 {t['late_p50']:.2f} us p99 {t['late_p99']:.2f} us; "
          f"CPU per write this {t['cpu_this']:.1f} us, before {t['cpu_before']:.1f}, peer {t['cpu_peer']:.1f}")
print(f"steal: {float(env['NA_STEAL']):.2f}% of the CPU time over the run")
path = env["NA_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = ["## nvram_accuracy", "",
         "4 KiB writes at queue depth 1 (nvj bench, exact percentiles) to the journal export with "
         "journal-model=nvram:latency=L,bandwidth=0 against journal-model=none on the same server (POST /model "
         "between windows), in pairs of windows, the pair's order alternating; added = the client's p50 (or p99) "
         "with the model minus without, median over the pairs; one server per configuration and L, their turns "
         "rotating by round. The verdict uses nbdkit --threads=1 and a busy-polling client (nvj bench --busy-poll). "
         "In the same rounds: *before*, the plugin built from the baseline commit; *peer*, bench/spin_plugin.cpp, "
         "which spins the whole wait and does nothing else. *Server late*: how long after the model's completion "
         "time this build's replies left (its GET /stats, late_us). *Sleeps*: the share of waits that slept "
         "before spinning, and of those the share woken past their deadline. *CPU per write*: the server's user + "
         "system time over all windows per write in them, with the model minus without. The last two columns "
         "add what the model does not cause: nbdkit's default 16 workers, and a client that sleeps in poll().", "",
         f"- Command: `{env['NA_COMMAND']}`", f"- Date: {env['NA_DATE']}",
         f"- Git commit: {env['NA_GIT']}; baseline {env['NA_BASELINE']}",
         f"- {env['NA_ROUNDS']} pairs of {env['NA_WINDOW']} s windows per configuration and L; the machine's steal "
         f"time over the run: {float(env['NA_STEAL']):.2f}%", "",
         "| L | added p50 (us) | quartiles of the pairs | error (us) | allowed (us) | verdict | before: error (us) | "
         "peer: error (us) | server late p50 / p99 (us) | slept / woken late | 16 workers: added (us) | "
         "sleeping client: added (us) |",
         "|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
for t in table:
    lines.append(f"| {t['L']} | {t['this']:.2f} | {t['iqr'][0]:.2f} .. {t['iqr'][1]:.2f} | "
                 f"{t['this'] - t['target']:+.2f} | {t['tol']:.2f} | {t['verdict']} | {t['before'] - t['target']:+.2f} | "
                 f"{t['peer'] - t['target']:+.2f} | {t['late_p50']:.2f} / {t['late_p99']:.2f} | "
                 f"{t['slept']:.0f}% / {t['woke_late']:.2f}% | {t['many']:.2f} | {t['sleeping']:.2f} |")
lines += ["", "| L | p99 added: this / before / peer (us) | CPU per write: this / before / peer (us) | "
          "of which spinning, this (us) |", "|---|---:|---:|---:|"]
for t in table:
    lines.append(f"| {t['L']} | {t['p99_this']:.1f} / {t['p99_before']:.1f} / {t['p99_peer']:.1f} | "
                 f"{t['cpu_this']:.1f} / {t['cpu_before']:.1f} / {t['cpu_peer']:.1f} | {t['spun']:.1f} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "nvram_accuracy", path],
               input=section, text=True, check=True)
PY
