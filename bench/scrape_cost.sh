#!/usr/bin/env bash
# scrape_cost.sh: what being scraped costs the server. 4 KiB random-write
# IOPS at queue depth 16 (fio's nbd engine, the data export with no timing
# model) with GET /metrics fetched from the metrics= listener every 100 ms,
# against the same server not scraped, in the same run.
#
# Usage: bench/scrape_cost.sh [--plugin PATH] [--runtime SECONDS] [--rounds N]
#                             [--interval MS] [--scrapes N] [--markdown FILE]
#
# Every measurement gets a freshly started server, the same in both cases
# (metrics= is given to both; only the scraping differs). Per round, scraped
# and not scraped back to back (scraped first in odd rounds, second in even
# ones); the verdict is the median over rounds of the paired ratio
# scraped/not scraped (target >= 0.98). The scraper is one python3 process
# (http.client, one connection per scrape, as the server closes each), on a
# fixed schedule; it checks every answer is a 200 with the histograms in it.
# Then, deterministically: the server's CPU time per scrape (its threads'
# time on CPU from /proc/PID/task/*/schedstat, over --scrapes back-to-back
# scrapes of an idle server with the load's statistics), and the size of
# the text.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
runtime=10
rounds=7
interval=100
scrapes=2000
markdown=""
depth=16
disk_size=1G
seed=20240601
target=0.98

bench_option --plugin plugin text
bench_option --runtime runtime count
bench_option --rounds rounds count
bench_option --interval interval count
bench_option --scrapes scrapes count
bench_option --markdown markdown text
bench_parse "$@"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio python3

source "$script_dir/lib/server.sh"
bench_init scrape_cost
scraper_pid=""
stop_scraper() {
  if [[ -n $scraper_pid ]]; then
    kill -TERM "$scraper_pid" 2>/dev/null || true
    wait "$scraper_pid" 2>/dev/null || true
    scraper_pid=""
  fi
}
trap 'stop_scraper; bench_cleanup' EXIT

# The scraper: GET /metrics every INTERVAL ms until SIGTERM (or COUNT times
# back to back with INTERVAL 0); then one line: scrapes, mean and max
# seconds per scrape, bytes of the last answer.
cat >"$tmp/scraper.py" <<'EOF'
import http.client, signal, sys, time
port, interval_ms, count, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
done, total, longest, size = 0, 0.0, 0.0, 0
next_at = time.monotonic()
while not stop and (count == 0 or done < count):
    start = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200 or b"nvjournal_latency_seconds_bucket" not in body:
        sys.exit(f"scrape {done + 1}: {r.status}, {len(body)} bytes")
    took = time.monotonic() - start
    done, total, longest, size = done + 1, total + took, max(longest, took), len(body)
    if interval_ms:
        next_at += interval_ms / 1000
        time.sleep(max(0.0, next_at - time.monotonic()))
with open(out, "w") as f:
    f.write(f"{done}\t{total / max(done, 1):.6f}\t{longest:.6f}\t{size}\n")
EOF

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve: a fresh server with metrics= on a free port; sets port.
serve() {
  port=$(free_port)
  bench_start nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" "data=$disk_size" data-model=none \
    "metrics=127.0.0.1:$port"
}

# run_fio RUNTIME|writes:N : 4 KiB random writes at depth 16; prints IOPS.
run_fio() {
  local -a limit=(--time_based --runtime="$1")
  if [[ $1 == writes:* ]]; then limit=(--number_ios="${1#writes:}"); fi
  fio --name=randwrite --ioengine=nbd --uri="nbd+unix:///data?socket=$tmp/s.sock" --rw=randwrite --bs=4k \
      --iodepth="$depth" --numjobs=1 --size="$disk_size" "${limit[@]}" --randrepeat=1 --randseed="$seed" \
      --output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" || { cat "$tmp/fio.err" "$tmp/fio.json" >&2; exit 1; }
  python3 - "$tmp/fio.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
if job.get("error"):
    sys.exit(f"fio job error {job['error']}")
print(f"{job['write']['iops']:.0f}")
EOF
}

# --- IOPS, paired rounds --------------------------------------------------------
results="$tmp/results.tsv"
: >"$results"
total=$((rounds * 2))
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
n=0
echo "scrape_cost: plugin $plugin"
echo "scrape_cost: $rounds round(s) x {scraped every ${interval} ms, not scraped}, ${runtime} s each at depth $depth"
for ((round = 1; round <= rounds; round++)); do
  order="scraped none"
  if ((round % 2 == 0)); then order="none scraped"; fi
  for mode in $order; do
    n=$((n + 1))
    serve
    note=""
    if [[ $mode == scraped ]]; then
      python3 "$tmp/scraper.py" "$port" "$interval" 0 "$tmp/scraper.out" &
      scraper_pid=$!
    fi
    iops=$(run_fio "$runtime")
    if [[ $mode == scraped ]]; then
      stop_scraper
      IFS=$'\t' read -r got mean longest size <"$tmp/scraper.out"
      note=$(printf '%d scrapes, %.2f ms mean, %.2f ms max, %d bytes' "$got" "$(python3 -c "print($mean * 1000)")" \
        "$(python3 -c "print($longest * 1000)")" "$size")
      printf '%s\t%s\t%s\t%s\n' "$round" "$got" "$mean" "$size" >>"$tmp/scrapes.tsv"
    fi
    bench_stop
    printf '%s\t%s\t%s\n' "$mode" "$round" "$iops" >>"$results"
    printf '  [%2d/%d] round %d  %-8s %8s IOPS  %s\n' "$n" "$total" "$round" "$mode" "$iops" "$note"
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# --- CPU per scrape ----------------------------------------------------------
# The server's threads' time on CPU (ns), summed.
cpu_ns() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ total += $1 } END { printf "%.0f\n", total }'
}
serve
run_fio "writes:20000" >/dev/null  # statistics in every bucket the load reaches, as under load
sleep 1                            # the connection's threads are gone
cpu_before=$(cpu_ns "$server_pid")
python3 "$tmp/scraper.py" "$port" 0 "$scrapes" "$tmp/cpu-scrapes.out"
cpu_after=$(cpu_ns "$server_pid")
bench_stop
IFS=$'\t' read -r cpu_done cpu_mean _ cpu_size <"$tmp/cpu-scrapes.out"
cpu_per_scrape_us=$(python3 -c "print(f'{($cpu_after - $cpu_before) / $cpu_done / 1000:.1f}')")
echo "scrape_cost: $cpu_done scrapes of an idle server: $cpu_per_scrape_us us of server CPU each, ${cpu_size} bytes"

# --- report -------------------------------------------------------------------
git_rev=$(bench_git_rev)
SC_RESULTS=$results SC_SCRAPES=$tmp/scrapes.tsv SC_MARKDOWN=$markdown SC_COMMAND=$command_line \
SC_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') SC_NBDKIT=$(nbdkit --version | head -n1) SC_FIO=$(fio --version | head -n1) \
SC_GIT=$git_rev SC_PLUGIN=$plugin SC_REPO=$repo_dir SC_TARGET=$target SC_INTERVAL=$interval \
SC_CPU="$cpu_per_scrape_us" SC_CPU_SCRAPES=$cpu_done SC_CPU_SIZE=$cpu_size \
SC_SETUP="nbdkit nvjournal data=$disk_size data-model=none metrics=127.0.0.1:PORT (ext4 with its journal on the journal export, statistics and journal tracing on, nbdkit default threads), fresh server per measurement; fio --ioengine=nbd --rw=randwrite --bs=4k --iodepth=$depth --numjobs=1 --size=$disk_size --time_based --runtime=$runtime --randrepeat=1 --randseed=$seed on the data export; scraped: GET /metrics every $interval ms from one python3 process for the whole run; order: scraped then not in odd rounds, not then scraped in even rounds" \
SC_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, statistics, subprocess

env = os.environ
target = float(env["SC_TARGET"])
iops = {}
for line in open(env["SC_RESULTS"]):
    mode, rnd, value = line.split("\t")
    iops[(mode, int(rnd))] = float(value)
rounds = sorted({r for _, r in iops})
samples = {m: [iops[(m, r)] for r in rounds] for m in ("scraped", "none")}
median = {m: statistics.median(v) for m, v in samples.items()}
spread = {m: (max(v) - min(v)) / median[m] * 100 for m, v in samples.items()}
paired = [iops[("scraped", r)] / iops[("none", r)] for r in rounds]
ratio = statistics.median(paired)
verdict = "PASS" if ratio >= target else "FAIL"
scrape_rows = [line.rstrip("\n").split("\t") for line in open(env["SC_SCRAPES"])]
per_run = [int(s[1]) for s in scrape_rows]
mean_ms = statistics.mean(float(s[2]) for s in scrape_rows) * 1000

print()
print(f"{'mode':<8} {'median IOPS':>12}  {'spread':>7}  rounds")
for m in ("scraped", "none"):
    print(f"{m:<8} {median[m]:>12.0f}  {spread[m]:>6.1f}%  " + " ".join(f"{x:.0f}" for x in samples[m]))
print(f"\nratio scraped/none: {ratio:.3f} (median of paired rounds: " + " ".join(f"{x:.3f}" for x in paired)
      + f"; ratio of medians {median['scraped'] / median['none']:.3f})  {verdict} (target >= {target})")
print(f"scrapes per scraped run: {min(per_run)}..{max(per_run)}, mean {mean_ms:.2f} ms each as the scraper saw it; "
      f"server CPU per scrape {env['SC_CPU']} us ({env['SC_CPU_SIZE']} bytes of text)")

path = env["SC_MARKDOWN"]
if not path:
    raise SystemExit(0)
cpu_share = float(env["SC_CPU"]) * 1e-6 * (1000 / float(env["SC_INTERVAL"])) * 100
lines = [
    "## scrape_cost",
    "",
    f"What being scraped costs the server: 4 KiB random-write IOPS at queue depth 16 with GET /metrics fetched from"
    f" the metrics= listener every {env['SC_INTERVAL']} ms, against the same server not scraped, in the same run."
    f" Target: scraped/not scraped >= {target}.",
    "",
    f"- Command: `{env['SC_COMMAND']}`",
    f"- Date: {env['SC_DATE']}",
    f"- nbdkit: {env['SC_NBDKIT']}; {env['SC_FIO']}",
    f"- Git commit: {env['SC_GIT']}",
    f"- Plugin: `{os.path.relpath(env['SC_PLUGIN'], env['SC_REPO'])}`",
    f"- Setup: {env['SC_SETUP']}",
    f"- Load average (1/5/15 min): {env['SC_LOAD']}",
    "",
    "| mode | median IOPS | spread (max-min)/median | all rounds |",
    "|---|---:|---:|---|",
]
for m in ("scraped", "none"):
    lines.append(f"| {m} | {median[m]:.0f} | {spread[m]:.1f}% | " + ", ".join(f"{x:.0f}" for x in samples[m]) + " |")
lines += [
    "",
    "| IOPS scraped/none (median of paired rounds) | paired rounds | ratio of medians | target | verdict |",
    "|---:|---|---:|---:|---|",
    f"| {ratio:.3f} | " + ", ".join(f"{x:.3f}" for x in paired)
    + f" | {median['scraped'] / median['none']:.3f} | >= {target} | {verdict} |",
    "",
    f"Scrapes per scraped run: {min(per_run)} to {max(per_run)}, {mean_ms:.2f} ms each on average as the scraper saw"
    f" them (connect, request, the whole answer). The server's CPU per scrape, deterministic where IOPS on a shared"
    f" 2-CPU machine are not: {env['SC_CPU']} us (its threads' time on CPU over {env['SC_CPU_SCRAPES']} back-to-back"
    f" scrapes of an idle server after 20000 writes; {env['SC_CPU_SIZE']} bytes of text), i.e. {cpu_share:.2f}% of"
    f" one CPU at one scrape every {env['SC_INTERVAL']} ms.",
]
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "scrape_cost", path],
               input=section, text=True, check=True)
EOF
