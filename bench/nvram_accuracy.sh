#!/usr/bin/env bash
# nvram_accuracy.sh: how exactly the server waits. For each NVRAM write
# latency L, 4 KiB writes at queue depth 1 to the journal export, once with
# journal-model=nvram:latency=L,bandwidth=0 and once with journal-model=none,
# interleaved over rounds in the same run; the added p50 (with minus without)
# should be within max(2 us, 2% of L) of L.
#
# The verdict runs nbdkit with --threads=1 (one request in flight needs one
# worker) and a client that polls without sleeping (nvj bench --busy-poll),
# so neither nbdkit's hand-off to a worker asleep in recv() nor the client's
# own wake-up is counted as the model's. Two more columns show what they add:
# nbdkit's default 16 workers, and a client that sleeps in poll().
#
# Usage: bench/nvram_accuracy.sh [--rounds N] [--duration SECONDS] [--markdown FILE]
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
nvj="$repo_dir/build/tools/nvj/nvj"
rounds=3
duration=4
markdown=""
latencies=(10us 100us 1ms 10ms)

bench_option --rounds rounds count
bench_option --duration duration count
bench_option --markdown markdown text
bench_parse "$@"
for f in "$plugin" "$nvj"; do [[ -f $f ]] || bench_fail "$f is missing (ninja -C build)"; done
bench_require nbdkit python3

source "$script_dir/lib/server.sh"
bench_init nvram_accuracy

# p50 MODEL THREADS [BENCH OPTIONS]: median write latency in us on a fresh server.
p50() {
  local model=$1 threads=$2; shift 2
  bench_start nbdkit --foreground --threads="$threads" -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" journal=64M \
    "journal-model=$model" data-model=none
  "$nvj" bench --json --duration "$duration" --span 32M "$@" "nbd+unix:///journal?socket=$tmp/s.sock" \
    >"$tmp/bench.json"
  bench_stop
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency_us"]["p50"])' "$tmp/bench.json"
}

results="$tmp/results.tsv"
: >"$results"
echo "nvram_accuracy: latencies ${latencies[*]}, $rounds rounds of ${duration} s each way"
for ((round = 1; round <= rounds; round++)); do
  for L in "${latencies[@]}"; do
    model="nvram:latency=$L,bandwidth=0"
    base=$(p50 none 1 --busy-poll)
    with=$(p50 "$model" 1 --busy-poll)
    tbase=$(p50 none 16 --busy-poll)
    twith=$(p50 "$model" 16 --busy-poll)
    sbase=$(p50 none 1)
    swith=$(p50 "$model" 1)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$L" "$round" "$base" "$with" "$tbase" "$twith" "$sbase" "$swith" \
      >>"$results"
    printf '  round %d  L=%-6s  added %9.2f us; with 16 workers %9.2f us; sleeping client %9.2f us\n' "$round" "$L" \
      "$(python3 -c "print($with - $base)")" "$(python3 -c "print($twith - $tbase)")" "$(python3 -c "print($swith - $sbase)")"
  done
done

NA_RESULTS=$results NA_MARKDOWN=$markdown NA_COMMAND=$command_line NA_DURATION=$duration \
NA_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') NA_GIT=$(bench_git_rev) \
BENCH_DIR=$script_dir python3 - <<'PY'
import os, re, statistics, subprocess
env = os.environ
units = {"us": 1, "ms": 1000, "s": 1e6}
def to_us(t):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", t)
    return float(m.group(1)) * units[m.group(2)]
rows = {}
sleeping = {}
workers = {}
for line in open(env["NA_RESULTS"]):
    L, rnd, base, with_, tbase, twith, sbase, swith = line.split("\t")
    rows.setdefault(L, []).append(float(with_) - float(base))
    workers.setdefault(L, []).append(float(twith) - float(tbase))
    sleeping.setdefault(L, []).append(float(swith) - float(sbase))
table = []
for L, added in rows.items():
    target = to_us(L)
    med = statistics.median(added)
    tol = max(2.0, 0.02 * target)
    table.append((L, target, med, added, tol, "PASS" if abs(med - target) <= tol else "FAIL",
                  statistics.median(workers[L]), statistics.median(sleeping[L])))
print()
for L, target, med, added, tol, verdict, many, slept in table:
    print(f"L={L}: added p50 {med:.2f} us (rounds: {', '.join(f'{a:.2f}' for a in added)}), "
          f"error {med - target:+.2f} us, allowed {tol:.2f} us  {verdict}; "
          f"16 workers: {many:.2f} us; sleeping client: {slept:.2f} us")
path = env["NA_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = ["## nvram_accuracy", "",
         "4 KiB writes at queue depth 1 (nvj bench, exact percentiles) to the journal export with "
         "journal-model=nvram:latency=L,bandwidth=0 against journal-model=none, fresh server per run, "
         "interleaved; added p50 = p50 with the model minus p50 without, median over rounds. The verdict uses "
         "nbdkit --threads=1 and a busy-polling client (nvj bench --busy-poll). The last two columns add "
         "what the model does not cause: nbdkit's default 16 workers (the next request is read by a worker "
         "asleep in recv() once the wait outlasts its wake-up) and a client that sleeps in poll().", "",
         f"- Command: `{env['NA_COMMAND']}`", f"- Date: {env['NA_DATE']}", f"- Git commit: {env['NA_GIT']}",
         f"- {env['NA_DURATION']} s per run", "",
         "| L | added p50 (us) | rounds | error (us) | allowed (us) | verdict | 16 workers: added (us) | "
         "sleeping client: added (us) |",
         "|---|---:|---|---:|---:|---|---:|---:|"]
for L, target, med, added, tol, verdict, many, slept in table:
    lines.append(f"| {L} | {med:.2f} | {', '.join(f'{a:.2f}' for a in added)} | {med - target:+.2f} | {tol:.2f} | "
                 f"{verdict} | {many:.2f} | {slept:.2f} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "nvram_accuracy", path],
               input=section, text=True, check=True)
PY
