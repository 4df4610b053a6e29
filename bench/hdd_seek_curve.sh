#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hdd_seek_curve.sh: the hdd model's seek and rotation as a client sees them.
# Random 4 KiB reads at queue depth 1 over growing spans of a 1 TiB data
# export timed as a 7200 rpm disk (readahead off, so every read goes to the
# media); per span the mean service time (nvj bench) and the model's mean
# seek and rotational wait (GET /stats). Plotted (gnuplot, PNG and SVG) with
# the datasheet's average seek (8.5 ms, the default) and half a revolution
# (4.17 ms at 7200 rpm): seeks grow with the span, steeply at first (the
# square-root start of the curve), and rotation stays at half a turn.
#
# Usage: bench/hdd_seek_curve.sh [--duration SECONDS] [--out DIR] [--markdown FILE]
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
nvj="$repo_dir/build/tools/nvj/nvj"
duration=3
out="$script_dir/results"
markdown=""
spans=(1M 8M 64M 512M 4G 32G 256G 1T)
bench_option --duration duration count
bench_option --out out text
bench_option --markdown markdown text
bench_parse "$@"
bench_require nbdkit curl python3 gnuplot:gnuplot-nox
mkdir -p "$out"

source "$script_dir/lib/server.sh"
bench_init hdd_seek_curve

bench_start nbdkit --foreground -U "$tmp/s.sock" -P "$tmp/s.pid" "$plugin" data=1T "control=$tmp/c.sock" \
  data-model=hdd:cache=off,readahead=0 journal-model=none

tsv="$out/hdd_seek_curve.tsv"
printf 'span\tspan_bytes\tmean_service_ms\tmean_seek_ms\tmean_rotation_ms\tmean_seek_cylinders\treads\n' >"$tsv"
for span in "${spans[@]}"; do
  curl -sf -X POST --unix-socket "$tmp/c.sock" http://lab/reset-stats >/dev/null
  "$nvj" bench --json --write-percent 0 --duration "$duration" --span "$span" --seed 3 \
    "nbd+unix:///data?socket=$tmp/s.sock" >"$tmp/bench.json"
  curl -sf --unix-socket "$tmp/c.sock" http://lab/stats >"$tmp/stats.json"
  python3 - "$span" "$tmp/bench.json" "$tmp/stats.json" >>"$tsv" <<'PY'
import json, sys
span, bench, stats = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
d = stats["exports"]["data"]
reads = d["ops"]["read"]["count"]
units = {"M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
t = d["device_time_us"]
seeks = d["seeks"]["count"]
print(f"{span}\t{int(span[:-1]) * units[span[-1]]}\t{bench['latency_us']['mean'] / 1000:.3f}\t"
      f"{t['seek'] / reads / 1000:.3f}\t{t['rotation'] / reads / 1000:.3f}\t"
      f"{(d['seeks']['cylinders'] / seeks if seeks else 0):.0f}\t{reads}")
PY
  tail -n 1 "$tsv" | awk -F'\t' '{ printf "  span %-5s service %7.2f ms  seek %6.2f ms  rotation %5.2f ms  (%s reads)\n", $1, $3, $4, $5, $7 }'
done

for fmt in png svg; do
  term="pngcairo size 900,560"
  if [[ $fmt == svg ]]; then term="svg size 900,560"; fi
  gnuplot <<GP
set terminal $term
set output "$out/hdd_seek_curve.$fmt"
set title "nvjournal hdd model (7200 rpm, 1 TiB): random 4 KiB reads at queue depth 1"
set xlabel "span of the reads (bytes, log scale)"
set ylabel "milliseconds per read"
set logscale x 2
set format x "%.0b%B"
set key top left
set grid
set yrange [0:*]
plot "$tsv" using 2:3 skip 1 with linespoints lw 2 title "service time (client)", \
     "$tsv" using 2:4 skip 1 with linespoints lw 2 title "seek (model)", \
     "$tsv" using 2:5 skip 1 with linespoints lw 2 title "rotational wait (model)", \
     8.5 with lines dt 2 lc rgb "gray40" title "datasheet average seek, 8.5 ms", \
     4.167 with lines dt 3 lc rgb "gray60" title "half a revolution at 7200 rpm, 4.17 ms"
GP
done
echo "wrote $tsv, $out/hdd_seek_curve.png and .svg"

if [[ -n $markdown ]]; then
  HS_TSV=$tsv HS_MD=$markdown HS_COMMAND=$command_line HS_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') \
  HS_GIT=$(bench_git_rev) BENCH_DIR=$script_dir python3 - <<'PY'
import os, subprocess
env = os.environ
rows = [l.rstrip("\n").split("\t") for l in open(env["HS_TSV"])][1:]
lines = ["## hdd_seek_curve", "",
         "Random 4 KiB reads at queue depth 1 over growing spans of a 1 TiB export, data-model=hdd:cache=off,readahead=0 "
         "(7200 rpm; seek 1 ms / 8.5 ms / 17 ms). Service time from nvj bench, seek and rotation from the server's "
         "statistics. Plot: `bench/results/hdd_seek_curve.png` (and .svg).", "",
         f"- Command: `{env['HS_COMMAND']}`", f"- Date: {env['HS_DATE']}", f"- Git commit: {env['HS_GIT']}", "",
         "| span | service (ms) | seek (ms) | rotation (ms) | mean seek distance (cylinders) | reads |",
         "|---|---:|---:|---:|---:|---:|"]
for r in rows:
    lines.append(f"| {r[0]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} |")
lines += ["", "![hdd seek curve](results/hdd_seek_curve.png)"]
section = "\n".join(lines) + "\n"
path = env["HS_MD"]
subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "hdd_seek_curve", path],
               input=section, text=True, check=True)
PY
fi
