#!/usr/bin/env bash
# nvram_accuracy.sh: how exactly the server waits, and what the waits cost.
# For each NVRAM write latency L, 4 KiB writes at queue depth 1 to the journal
# export with journal-model=nvram:latency=L,bandwidth=0, against the same
# server with journal-model=none; the added p50 (with minus without) should
# be within max(2 us, 2% of L) of L.
#
# In each round, fresh servers in turn (the order rotating from round to
# round, so the machine's drift falls on all alike):
#   none     this build, journal-model=none                 (the base)
#   this     this build, the model
#   before   the plugin built from the baseline commit, the model
#   peer     build/bench/nbdkit-spin-plugin.so, latency-ns=0 and =L: a
#            plugin that spins the whole wait and does nothing else, the
#            best a server on this machine can do for the same latency
# each with nbdkit --threads=1 (one request in flight needs one worker) and a
# client that polls without sleeping (nvj bench --busy-poll), so that neither
# nbdkit's hand-off to a worker asleep in recv() nor the client's own wake-up
# is counted. Per run: the client's p50 and p99, the server's CPU time per
# write (user + system, /proc), and for this build the server's own account
# (GET /stats: how late replies left against the model, and what the clock's
# waits did). Two more runs of this build show what the model does not cause:
# nbdkit's default 16 workers, and a client that sleeps in poll(). The
# machine's steal time over the whole run is reported too.
#
# Usage: bench/nvram_accuracy.sh [--rounds N] [--duration SECONDS] [--baseline REV] [--baseline-plugin PATH] [--markdown FILE]
#   --baseline REV           the commit the "before" plugin is built from
#                            (git worktree, RelWithDebInfo); default 0bc9a6e,
#                            the clock whose spin window was twice the mean
#                            lateness of its sleeps
#   --baseline-plugin PATH   a plugin already built, instead
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
peer="$repo_dir/build/bench/nbdkit-spin-plugin.so"
nvj="$repo_dir/build/tools/nvj/nvj"
rounds=3
duration=3
baseline=0bc9a6e
baseline_plugin=""
markdown=""
latencies=(10us 100us 1ms 10ms)

bench_option --rounds rounds count
bench_option --duration duration count
bench_option --baseline baseline text
bench_option --baseline-plugin baseline_plugin text
bench_option --markdown markdown text
bench_parse "$@"
for f in "$plugin" "$peer" "$nvj"; do [[ -f $f ]] || bench_fail "$f is missing (ninja -C build)"; done
bench_require nbdkit python3 curl git cmake ninja

source "$script_dir/lib/server.sh"
bench_init nvram_accuracy
remove_worktree() {
  git -C "$repo_dir" worktree remove --force "$tmp/src" 2>/dev/null || true
  bench_cleanup
}
trap remove_worktree EXIT

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
steal() { awk '/^cpu /{ print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# run L ROUND NAME THREADS SERVER-ARGS... -- BENCH-OPTIONS...: one fresh
# server, one nvj bench, one line of results.
run() {
  local L=$1 round=$2 name=$3 threads=$4; shift 4
  local server=() opts=()
  while [[ $1 != -- ]]; do server+=("$1"); shift; done
  shift
  opts=("$@")
  rm -f "$tmp/c.sock"
  bench_start nbdkit --foreground --threads="$threads" -U "$tmp/s.sock" -P "$tmp/s.pid" "${server[@]}"
  local pid=$server_pid
  "$nvj" bench --json --duration "$duration" --span 32M "${opts[@]}" "nbd+unix:///journal?socket=$tmp/s.sock" \
    >"$tmp/bench.json"
  echo '{}' >"$tmp/stats.json"
  if [[ $name == this ]]; then
    curl -sf --unix-socket "$tmp/c.sock" http://nvj/stats >"$tmp/stats.json" || bench_fail "GET /stats failed"
  fi
  local cpu
  cpu=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  bench_stop
  python3 - "$L" "$round" "$name" "$cpu" "$ticks" "$tmp/bench.json" "$tmp/stats.json" >>"$results" <<'PY'
import json, sys
L, rnd, name, cpu, ticks, bench, stats = sys.argv[1:]
b = json.load(open(bench))
s = json.load(open(stats))
row = {"L": L, "round": int(rnd), "name": name, "p50": b["latency_us"]["p50"], "p99": b["latency_us"]["p99"],
       "cpu_us": int(cpu) / int(ticks) * 1e6 / b["requests"]}
if s:
    late = s["exports"]["journal"]["late_us"]
    row.update(late_p50=late["p50"], late_p99=late["p99"], waits=s["clock"]["waits"],
               woke_late=s["clock"]["woke_late"], spun_us=s["clock"]["spun_s"] * 1e6 / max(1, s["clock"]["waits"]))
print(json.dumps(row))
PY
}

results="$tmp/results.jsonl"
: >"$results"
read -r steal0 total0 < <(steal)
echo "nvram_accuracy: latencies ${latencies[*]}, $rounds rounds of ${duration} s a run"
for ((round = 1; round <= rounds; round++)); do
  for L in "${latencies[@]}"; do
    model="nvram:latency=$L,bandwidth=0"
    ns=$(python3 -c 'import re,sys; m=re.fullmatch(r"([0-9.]+)(us|ms|s)", sys.argv[1]); print(int(float(m.group(1)) * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]))' "$L")
    mine=("$plugin" journal=64M data-model=none "control=$tmp/c.sock")
    old=("$before" journal=64M data-model=none "control=$tmp/c.sock")
    runs=(
      "none 1 ${mine[*]} journal-model=none -- --busy-poll"
      "this 1 ${mine[*]} journal-model=$model -- --busy-poll"
      "before 1 ${old[*]} journal-model=$model -- --busy-poll"
      "peer0 1 $peer latency-ns=0 -- --busy-poll"
      "peer 1 $peer latency-ns=$ns -- --busy-poll"
    )
    for ((i = 0; i < ${#runs[@]}; i++)); do
      # shellcheck disable=SC2086 # each entry is a word list of paths without spaces
      run "$L" "$round" ${runs[(i + round) % ${#runs[@]}]}
    done
    run "$L" "$round" none16 16 "${mine[@]}" journal-model=none -- --busy-poll
    run "$L" "$round" this16 16 "${mine[@]}" "journal-model=$model" -- --busy-poll
    run "$L" "$round" none_sleeping 1 "${mine[@]}" journal-model=none --
    run "$L" "$round" this_sleeping 1 "${mine[@]}" "journal-model=$model" --
    python3 - "$results" "$L" "$round" <<'PY'
import json, sys
rows = {r["name"]: r for r in map(json.loads, open(sys.argv[1])) if r["L"] == sys.argv[2] and r["round"] == int(sys.argv[3])}
d = lambda a, b: rows[a]["p50"] - rows[b]["p50"]
print(f"  round {sys.argv[3]}  L={sys.argv[2]:<6}  added: this {d('this', 'none'):9.2f} us, before {d('before', 'none'):9.2f}, "
      f"peer {d('peer', 'peer0'):9.2f}; server late p50 {rows['this']['late_p50']:.2f} us")
PY
  done
done
read -r steal1 total1 < <(steal)

NA_RESULTS=$results NA_MARKDOWN=$markdown NA_COMMAND=$command_line NA_DURATION=$duration NA_BASELINE=$baseline \
NA_STEAL=$(python3 -c "print(100 * ($steal1 - $steal0) / max(1, $total1 - $total0))") \
NA_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') NA_GIT=$(bench_git_rev) \
BENCH_DIR=$script_dir python3 - <<'PY'
import json, os, re, statistics, subprocess
env = os.environ
units = {"us": 1, "ms": 1000, "s": 1e6}
def to_us(t):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", t)
    return float(m.group(1)) * units[m.group(2)]
runs = {}
for r in map(json.loads, open(env["NA_RESULTS"])):
    runs.setdefault((r["L"], r["round"]), {})[r["name"]] = r
by_L = {}
for (L, _), rows in runs.items():
    by_L.setdefault(L, []).append(rows)
med = statistics.median
def added(rs, a, b, field="p50"):
    return [r[a][field] - r[b][field] for r in rs]
table = []
for L, rs in by_L.items():
    target = to_us(L)
    tol = max(2.0, 0.02 * target)
    this, before, peer = added(rs, "this", "none"), added(rs, "before", "none"), added(rs, "peer", "peer0")
    row = dict(L=L, target=target, tol=tol, this=med(this), this_rounds=this, before=med(before), peer=med(peer),
               p99_this=med(added(rs, "this", "none", "p99")), p99_before=med(added(rs, "before", "none", "p99")),
               p99_peer=med(added(rs, "peer", "peer0", "p99")),
               cpu_this=med(added(rs, "this", "none", "cpu_us")), cpu_before=med(added(rs, "before", "none", "cpu_us")),
               cpu_peer=med(added(rs, "peer", "peer0", "cpu_us")),
               late_p50=med([r["this"]["late_p50"] for r in rs]), late_p99=med([r["this"]["late_p99"] for r in rs]),
               woke_late=100 * sum(r["this"]["woke_late"] for r in rs) / max(1, sum(r["this"]["waits"] for r in rs)),
               spun=med([r["this"]["spun_us"] for r in rs]),
               many=med(added(rs, "this16", "none16")), slept=med(added(rs, "this_sleeping", "none_sleeping")))
    row["verdict"] = "PASS" if abs(row["this"] - target) <= tol else "FAIL"
    table.append(row)
print()
for t in table:
    print(f"L={t['L']}: added p50 {t['this']:.2f} us (rounds: {', '.join(f'{a:.2f}' for a in t['this_rounds'])}), "
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
         "journal-model=nvram:latency=L,bandwidth=0 against journal-model=none, a fresh server per run, the order "
         "rotating by round; added = the client's p50 (or p99) with the model minus without, median over rounds. "
         "The verdict uses nbdkit --threads=1 and a busy-polling client (nvj bench --busy-poll). Side by side in "
         "the same rounds: *before*, the plugin built from the baseline commit; *peer*, "
         "bench/spin_plugin.cpp, which spins the whole wait and does nothing else (latency-ns=L against "
         "latency-ns=0). *Server late*: how long after the model's completion time this build's replies left, "
         "from its own GET /stats (late_us). *CPU per write*: the server's user + system time per write with the "
         "model minus without. The last two columns add what the model does not cause: nbdkit's default 16 "
         "workers, and a client that sleeps in poll().", "",
         f"- Command: `{env['NA_COMMAND']}`", f"- Date: {env['NA_DATE']}",
         f"- Git commit: {env['NA_GIT']}; baseline {env['NA_BASELINE']}",
         f"- {env['NA_DURATION']} s per run; the machine's steal time over the run: {float(env['NA_STEAL']):.2f}%", "",
         "| L | added p50 (us) | rounds | error (us) | allowed (us) | verdict | before: error (us) | peer: error (us) | "
         "server late p50 / p99 (us) | sleeps woken late | 16 workers: added (us) | sleeping client: added (us) |",
         "|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
for t in table:
    lines.append(f"| {t['L']} | {t['this']:.2f} | {', '.join(f'{a:.2f}' for a in t['this_rounds'])} | "
                 f"{t['this'] - t['target']:+.2f} | {t['tol']:.2f} | {t['verdict']} | {t['before'] - t['target']:+.2f} | "
                 f"{t['peer'] - t['target']:+.2f} | {t['late_p50']:.2f} / {t['late_p99']:.2f} | {t['woke_late']:.2f}% | "
                 f"{t['many']:.2f} | {t['slept']:.2f} |")
lines += ["", "| L | p99 added: this / before / peer (us) | CPU per write: this / before / peer (us) | "
          "of which spinning, this (us) |", "|---|---:|---:|---:|"]
for t in table:
    lines.append(f"| {t['L']} | {t['p99_this']:.1f} / {t['p99_before']:.1f} / {t['p99_peer']:.1f} | "
                 f"{t['cpu_this']:.1f} / {t['cpu_before']:.1f} / {t['cpu_peer']:.1f} | {t['spun']:.1f} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "nvram_accuracy", path],
               input=section, text=True, check=True)
PY
