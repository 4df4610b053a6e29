#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scrape_cost.sh: what being scraped costs the server. 4 KiB random-write
# IOPS at queue depth 16 (fio's nbd engine, the data export with no timing
# model, so the server's own CPU path) while GET /metrics is fetched from
# the metrics= listener every 100 ms, against the same server under the same
# load not scraped.
#
# Usage: bench/scrape_cost.sh [--plugin PATH] [--servers N] [--rounds N]
#                             [--window SECONDS] [--interval MS]
#                             [--scrapes N] [--markdown FILE]
#
# Paired rounds on one running server and one fio run: a round is two
# windows of --window seconds back to back, one scraped and one not
# (scraped first in odd rounds, second in even ones), so a round's two
# windows share the server, the load and nearly the moment; --servers fresh
# servers, --rounds rounds each. A window's IOPS is the server's own write
# count (GET /metrics, read at both ends of every window, scraped or not)
# over the window's time. The verdict is the median over all rounds of the
# ratio scraped/not scraped (target >= 0.98). The scraper is one python3
# process (a plain socket per scrape, as the server closes each connection)
# that checks every answer is a 200 with the histograms in it. Then,
# deterministically: the server's CPU time per scrape (its threads' time on
# CPU from /proc/PID/task/*/schedstat over --scrapes back-to-back scrapes
# of an idle server holding a load's statistics) and the size of the text.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
servers=3
rounds=20
window=2
interval=100
scrapes=2000
markdown=""
depth=16
disk_size=1G
span=256M
seed=20240601
target=0.98

bench_option --plugin plugin text
bench_option --servers servers count
bench_option --rounds rounds count
bench_option --window window count
bench_option --interval interval count
bench_option --scrapes scrapes count
bench_option --markdown markdown text
bench_parse "$@"
((servers * rounds >= 2)) || bench_usage_error "--servers x --rounds: at least 2 paired rounds (for the quartiles)"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio python3

source "$script_dir/lib/server.sh"
bench_init scrape_cost

# The scraper: one python3 process, a plain socket per scrape (connect,
# GET, read to the server's close), the answer checked: 200 and the
# histograms in it.
#   scraper.py rounds PORT ROUNDS WINDOW INTERVAL_MS: the rounds against one
#     server; prints "bytes N" (the size of the text), then "MODE ROUND IOPS
#     SCRAPES" per window.
#   scraper.py burst PORT N: N scrapes back to back; prints its own CPU time
#     per scrape in us.
cat >"$tmp/scraper.py" <<'EOF'
import re, socket, sys, time
writes = re.compile(rb'^nvjournal_requests_total\{export="data",op="write"\} (\d+)$', re.M)
request = b"GET /metrics HTTP/1.1\r\nHost: lab\r\n\r\n"

def scrape(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        parts = []
        while chunk := s.recv(65536):
            parts.append(chunk)
    answer = b"".join(parts)
    body = answer[answer.find(b"\r\n\r\n") + 4:]
    if not answer.startswith(b"HTTP/1.1 200 ") or b"nvjournal_latency_seconds_bucket" not in body:
        sys.exit(f"GET /metrics: {answer[:80]!r}")
    return body

def write_count(port):
    body = scrape(port)
    m = writes.search(body)
    if m is None:
        sys.exit("GET /metrics: no write count of the data export")
    return int(m.group(1)), len(body)

def measure(port, scraped, window, interval):
    n0, size = write_count(port)
    t0 = time.monotonic()
    end, done = t0 + window, 0
    if scraped:
        at = t0 + interval
        while at < end - interval / 2:
            time.sleep(max(0.0, at - time.monotonic()))
            scrape(port)
            done, at = done + 1, at + interval
    time.sleep(max(0.0, end - time.monotonic()))
    n1, size = write_count(port)
    return (n1 - n0) / (time.monotonic() - t0), done, size

if sys.argv[1] == "rounds":
    port, rounds, window, interval = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]) / 1000
    for r in range(1, rounds + 1):
        for scraped in ((True, False) if r % 2 else (False, True)):
            iops, done, size = measure(port, scraped, window, interval)
            if r == 1 and scraped:
                print(f"bytes {size}")
            print(f"{'scraped' if scraped else 'none'} {r} {iops:.0f} {done}", flush=True)
else:
    port, n = int(sys.argv[2]), int(sys.argv[3])
    start = time.process_time()
    for _ in range(n):
        scrape(port)
    print(f"{(time.process_time() - start) / n * 1e6:.1f}")
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

# start_fio SECONDS|writes:N [wait]: 4 KiB random writes at depth 16 over
# the first $span of the data export, in the background (fio_pid), or to the
# end with `wait`.
start_fio() {
  local -a limit=(--time_based --runtime="$1")
  if [[ $1 == writes:* ]]; then limit=(--number_ios="${1#writes:}"); fi
  fio --name=randwrite --ioengine=nbd --uri="nbd+unix:///data?socket=$tmp/s.sock" --rw=randwrite --bs=4k \
      --iodepth="$depth" --numjobs=1 --size="$span" "${limit[@]}" --randrepeat=1 --randseed="$seed" \
      --output-format=json >"$tmp/fio.json" 2>"$tmp/fio.err" &
  fio_pid=$!
  if [[ ${2:-} == wait ]]; then
    wait "$fio_pid" || { cat "$tmp/fio.err" "$tmp/fio.json" >&2; exit 1; }
    fio_pid=""
  fi
}

# --- IOPS, paired rounds --------------------------------------------------------
results="$tmp/results.tsv"
: >"$results"
ramp=3
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
echo "scrape_cost: plugin $plugin"
echo "scrape_cost: $servers server(s) x $rounds round(s) x {scraped every ${interval} ms, not scraped}, ${window} s windows," \
  "depth $depth (~$((servers * (ramp + rounds * 2 * window + 3))) s)"
for ((s = 1; s <= servers; s++)); do
  serve
  # Long enough for the rounds; stopped after them. The first seconds fill
  # the span's pages.
  start_fio $((ramp + rounds * 2 * window + 30))
  sleep "$ramp"
  python3 "$tmp/scraper.py" rounds "$port" "$rounds" "$window" "$interval" >"$tmp/rounds.out" ||
    bench_fail "the scraper failed (server $s)"
  kill -0 "$fio_pid" 2>/dev/null || { cat "$tmp/fio.err" >&2; bench_fail "fio ended early (server $s)"; }
  stop_fio
  bench_stop
  size=$(awk '$1 == "bytes" { print $2 }' "$tmp/rounds.out")
  awk -v s="$s" '$1 != "bytes" { printf "%s\t%s\t%s\t%s\t%s\n", s, $1, $2, $3, $4 }' "$tmp/rounds.out" >>"$results"
  python3 - "$tmp/rounds.out" "$s" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("bytes")]
by = {(m, int(r)): float(i) for m, r, i, _ in rows}
rounds = sorted({r for _, r in by})
ratios = [by[("scraped", r)] / by[("none", r)] for r in rounds]
print(f"  server {sys.argv[2]}: median IOPS scraped {statistics.median(by[('scraped', r)] for r in rounds):.0f}, "
      f"not {statistics.median(by[('none', r)] for r in rounds):.0f}; paired ratio median {statistics.median(ratios):.3f} "
      f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
EOF
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# --- CPU per scrape ----------------------------------------------------------
# The server's threads' time on CPU (ns), summed.
cpu_ns() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ total += $1 } END { printf "%.0f\n", total }'
}
serve
start_fio "writes:20000" wait  # statistics in the buckets a load reaches
sleep 1                        # the connection's threads are gone
cpu_before=$(cpu_ns "$server_pid")
scraper_us=$(python3 "$tmp/scraper.py" burst "$port" "$scrapes")  # its own CPU per scrape, us
cpu_after=$(cpu_ns "$server_pid")
bench_stop
cpu_per_scrape_us=$(python3 -c "print(f'{($cpu_after - $cpu_before) / $scrapes / 1000:.1f}')")
echo "scrape_cost: $scrapes scrapes of an idle server: $cpu_per_scrape_us us of server CPU each;" \
  "the scraper's own: $scraper_us us"

# --- report -------------------------------------------------------------------
git_rev=$(bench_git_rev)
SC_RESULTS=$results SC_MARKDOWN=$markdown SC_COMMAND=$command_line \
SC_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') SC_NBDKIT=$(nbdkit --version | head -n1) SC_FIO=$(fio --version | head -n1) \
SC_GIT=$git_rev SC_PLUGIN=$plugin SC_REPO=$repo_dir SC_TARGET=$target SC_INTERVAL=$interval \
SC_CPU="$cpu_per_scrape_us" SC_SCRAPER_CPU="$scraper_us" SC_SCRAPES=$scrapes SC_SIZE=$size \
SC_SETUP="nbdkit nvjournal data=$disk_size data-model=none metrics=127.0.0.1:PORT (ext4 with its journal on the journal export, statistics and journal tracing on, nbdkit default threads); fio --ioengine=nbd --rw=randwrite --bs=4k --iodepth=$depth --numjobs=1 --size=$span --time_based --randrepeat=1 --randseed=$seed on the data export, running through all of a server's rounds after ${ramp} s of ramp; $servers fresh servers x $rounds rounds of two ${window} s windows, scraped (GET /metrics every $interval ms from one python3 process, a plain socket per scrape) and not, order alternating; a window's IOPS from the server's write count read at both of its ends" \
SC_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
BENCH_DIR=$script_dir python3 - <<'EOF'
import os, statistics, subprocess

env = os.environ
target = float(env["SC_TARGET"])
iops, scrapes = {}, []
for line in open(env["SC_RESULTS"]):
    server, mode, rnd, value, done = line.split("\t")
    iops[(int(server), mode, int(rnd))] = float(value)
    if mode == "scraped":
        scrapes.append(int(done))
keys = sorted({(s, r) for s, _, r in iops})
samples = {m: [iops[(s, m, r)] for s, r in keys] for m in ("scraped", "none")}
median = {m: statistics.median(v) for m, v in samples.items()}
spread = {m: (max(v) - min(v)) / median[m] * 100 for m, v in samples.items()}
paired = [iops[(s, "scraped", r)] / iops[(s, "none", r)] for s, r in keys]
ratio = statistics.median(paired)
q = statistics.quantiles(paired, n=4)
servers = sorted({s for s, _ in keys})
per_server = [(s, statistics.median(iops[(s, "scraped", r)] / iops[(s, "none", r)] for ss, r in keys if ss == s),
               statistics.median(iops[(s, "none", r)] for ss, r in keys if ss == s)) for s in servers]
verdict = "PASS" if ratio >= target else "FAIL"

print()
print(f"{'mode':<8} {'median IOPS':>12}  {'spread':>7}")
for m in ("scraped", "none"):
    print(f"{m:<8} {median[m]:>12.0f}  {spread[m]:>6.1f}%")
print(f"\nratio scraped/none: {ratio:.3f} (median of {len(paired)} paired rounds; quartiles {q[0]:.3f} .. {q[2]:.3f};"
      f" ratio of medians {median['scraped'] / median['none']:.3f})  {verdict} (target >= {target})")
print("per server: " + ", ".join(f"{s}: {r:.3f} at {n:.0f} IOPS" for s, r, n in per_server))
print(f"scrapes per scraped window: {min(scrapes)}..{max(scrapes)}; server CPU per scrape {env['SC_CPU']} us"
      f" ({env['SC_SIZE']} bytes of text), the scraper's {env['SC_SCRAPER_CPU']} us")

path = env["SC_MARKDOWN"]
if not path:
    raise SystemExit(0)
per_second = 1000 / float(env["SC_INTERVAL"])
cpu_share = float(env["SC_CPU"]) * 1e-6 * per_second * 100
scraper_share = float(env["SC_SCRAPER_CPU"]) * 1e-6 * per_second * 100
lines = [
    "## scrape_cost",
    "",
    f"What being scraped costs the server: 4 KiB random-write IOPS at queue depth 16 while GET /metrics is fetched"
    f" from the metrics= listener every {env['SC_INTERVAL']} ms, against the same server under the same load not"
    f" scraped. Target: scraped/not scraped >= {target}.",
    "",
    f"- Command: `{env['SC_COMMAND']}`",
    f"- Date: {env['SC_DATE']}",
    f"- nbdkit: {env['SC_NBDKIT']}; {env['SC_FIO']}",
    f"- Git commit: {env['SC_GIT']}",
    f"- Plugin: `{os.path.relpath(env['SC_PLUGIN'], env['SC_REPO'])}`",
    f"- Setup: {env['SC_SETUP']}",
    f"- Load average (1/5/15 min): {env['SC_LOAD']}",
    "",
    "| mode | median IOPS | spread (max-min)/median | windows |",
    "|---|---:|---:|---:|",
]
for m in ("scraped", "none"):
    lines.append(f"| {m} | {median[m]:.0f} | {spread[m]:.1f}% | {len(samples[m])} |")
lines += [
    "",
    "| IOPS scraped/none (median of paired rounds) | quartiles of the paired ratios | per server | ratio of medians"
    " | target | verdict |",
    "|---:|---|---|---:|---:|---|",
    f"| {ratio:.3f} | {q[0]:.3f} .. {q[2]:.3f} | "
    + ", ".join(f"{r:.3f}" for _, r, _ in per_server)
    + f" | {median['scraped'] / median['none']:.3f} | >= {target} | {verdict} |",
    "",
    f"Scrapes per scraped window: {min(scrapes)} to {max(scrapes)}. The server's CPU per scrape, deterministic where"
    f" IOPS on a shared 2-CPU machine are not: {env['SC_CPU']} us (its threads' time on CPU over"
    f" {env['SC_SCRAPES']} back-to-back scrapes of an idle server after 20000 writes; {env['SC_SIZE']} bytes of"
    f" text), i.e. {cpu_share:.2f}% of one CPU at one scrape every {env['SC_INTERVAL']} ms; the python3 scraper's"
    f" own, which competes for the same 2 CPUs in the scraped windows (Prometheus would run elsewhere):"
    f" {env['SC_SCRAPER_CPU']} us per scrape, {scraper_share:.2f}% of one CPU. With both CPUs busy serving, that is"
    f" the CPU scraping takes from the load; the paired ratios' quartiles above show what one round can resolve here.",
]
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "scrape_cost", path],
               input=section, text=True, check=True)
EOF
