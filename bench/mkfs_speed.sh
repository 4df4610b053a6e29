#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mkfs_speed.sh: nvj mkfs against mke2fs (the peer), in the same run, on the
# same filesystem, for the same ext4: 4 KiB blocks, mke2fs's default internal
# journal, the ext4 features without resize_inode
# (mke2fs -q -F -t ext4 -O ^resize_inode -b 4096, lazy_itable_init left at
# its default).
#
#   time      empty filesystems of 1 GiB, 64 GiB and 1 TiB: wall time, median
#             of N runs, each on a fresh sparse file; target: mke2fs/nvj >= 5
#             at 1 TiB
#   memory    peak RSS (/usr/bin/time -f %M) making a 16 TiB filesystem;
#             target: nvj under 64 MiB
#   populate  a 2 GiB image filled from a tree of 10,000 files (0 to 64 KiB,
#             100 directories, generated from a seed): nvj mkfs --populate
#             against mke2fs -d, median of N; target: nvj faster
#
# Usage: bench/mkfs_speed.sh [--nvj PATH] [--runs N] [--dir DIR] [--markdown FILE]
#
# NVJ in the environment names the binary too (default: build/tools/nvj/nvj).
# Images go to a scratch folder in DIR (default: $TMPDIR or /tmp); a 16 TiB
# file does not fit on ext4 (16 TiB - 4 KiB at most), so where DIR cannot hold
# one the memory run uses a folder in /dev/shm (tmpfs) for both tools.
# Timing: the clock starts just before the command and stops when it exits;
# each tool's own fsync of the image at its end is inside its time. Outside
# it: creating the sparse file for mke2fs (nvj creates its own), a sync before
# every run, and deleting the images after it. The order of the two tools
# alternates from run to run. Every image of the first run is checked with
# e2fsck -fn.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

nvj=${NVJ:-$repo_dir/build/tools/nvj/nvj}
runs=5
dir=${TMPDIR:-/tmp}
markdown=""
sizes=(1G 64G 1T)
memory_size=16T
populate_size=2G
populate_files=10000
populate_dirs=100
seed=20240601
time_target=5
memory_target_mib=64

bench_option --nvj nvj text
bench_option --runs runs count
bench_option --dir dir text
bench_option --markdown markdown text
bench_parse "$@"
[[ -x $nvj ]] || bench_fail "nvj not found: $nvj (build it with ninja -C build, or set NVJ)"
nvj=$(cd "$(dirname "$nvj")" && pwd)/$(basename "$nvj")
bench_require mke2fs e2fsck python3 truncate /usr/bin/time:time

TMPDIR=$dir
source "$script_dir/lib/server.sh"
bench_init mkfs_speed   # $tmp, removed on exit
shm=""
trap 'bench_cleanup; [[ -z $shm ]] || rm -rf "$shm"' EXIT

mke2fs_opts=(-q -F -t ext4 -O ^resize_inode -b 4096)
results=$tmp/results.tsv  # kind, size, tool, run, value
: >"$results"

now_us() { echo "${EPOCHREALTIME/./}"; }

# timed TOOL RUN SIZE IMAGE [EXTRA...] : one run of TOOL on a fresh image;
# prints the wall time in seconds.
timed() {
  local tool=$1 run=$2 size=$3 img=$4; shift 4
  local t0 t1
  rm -f "$img"
  if [[ $tool == mke2fs ]]; then truncate -s "$size" "$img"; fi
  sync
  if [[ $tool == nvj ]]; then
    t0=$(now_us); "$nvj" mkfs "$img" --size "$size" --block-size 4096 "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; exit 1; }; t1=$(now_us)
  else
    t0=$(now_us); mke2fs "${mke2fs_opts[@]}" "$@" "$img" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; exit 1; }; t1=$(now_us)
  fi
  if [[ $run == 1 ]]; then
    e2fsck -fn "$img" >"$tmp/fsck" 2>&1 || { echo "mkfs_speed.sh: e2fsck -fn failed on $tool's $size image:" >&2; cat "$tmp/fsck" >&2; exit 1; }
  fi
  rm -f "$img"
  python3 -c "print(f'{($t1 - $t0) / 1e6:.4f}')"
}

fstype_of() { findmnt -no FSTYPE -T "$1" 2>/dev/null | head -n 1 | grep . || stat -f -c %T "$1"; }
fstype=$(fstype_of "$tmp")
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
echo "mkfs_speed: $nvj; mke2fs $(mke2fs -V 2>&1 | head -n1 | awk '{print $2}'); images in $tmp ($fstype)"

# --- time: empty filesystems --------------------------------------------------
echo "== empty filesystems, $runs runs each, order alternating"
for size in "${sizes[@]}"; do
  for ((run = 1; run <= runs; run++)); do
    order="nvj mke2fs"
    if ((run % 2 == 0)); then order="mke2fs nvj"; fi
    line="  $size run $run:"
    for tool in $order; do
      s=$(timed "$tool" "$run" "$size" "$tmp/$tool.img")
      printf 'time\t%s\t%s\t%s\t%s\n' "$size" "$tool" "$run" "$s" >>"$results"
      line+=" $tool $s s"
    done
    echo "$line"
  done
done

# What starting the program costs, for the small sizes: nvj mkfs --help
# against mke2fs -V (neither touches a file).
echo "== start-up alone, $runs runs"
for ((run = 1; run <= runs; run++)); do
  t0=$(now_us); "$nvj" mkfs --help >/dev/null; t1=$(now_us)
  t2=$(now_us); mke2fs -V >/dev/null 2>&1; t3=$(now_us)
  printf 'startup\t-\tnvj\t%s\t%s\n' "$run" "$(python3 -c "print(($t1 - $t0) / 1e6)")" >>"$results"
  printf 'startup\t-\tmke2fs\t%s\t%s\n' "$run" "$(python3 -c "print(($t3 - $t2) / 1e6)")" >>"$results"
done

# --- memory: 16 TiB -----------------------------------------------------------
echo "== peak RSS at $memory_size"
memdir=$tmp
if ! truncate -s "$memory_size" "$tmp/probe.img" 2>/dev/null; then
  shm=$(mktemp -d /dev/shm/mkfs_speed.XXXXXX)
  memdir=$shm
  echo "  $fstype cannot hold a $memory_size file: both tools write to $memdir ($(fstype_of "$memdir"))"
fi
rm -f "$tmp/probe.img"
memory_fs=$(fstype_of "$memdir")
for tool in nvj mke2fs; do
  img=$memdir/$tool.img
  rm -f "$img"
  if [[ $tool == nvj ]]; then
    /usr/bin/time -o "$tmp/rss" -f '%M %e' "$nvj" mkfs "$img" --size "$memory_size" --block-size 4096 >/dev/null
  else
    truncate -s "$memory_size" "$img"
    /usr/bin/time -o "$tmp/rss" -f '%M %e' mke2fs "${mke2fs_opts[@]}" "$img" >/dev/null
  fi
  e2fsck -fn "$img" >"$tmp/fsck" 2>&1 || { echo "mkfs_speed.sh: e2fsck -fn failed on $tool's $memory_size image:" >&2; cat "$tmp/fsck" >&2; exit 1; }
  rm -f "$img"
  read -r kib secs <"$tmp/rss"
  printf 'memory\t%s\t%s\t1\t%s\n' "$memory_size" "$tool" "$kib" >>"$results"
  printf 'memory_time\t%s\t%s\t1\t%s\n' "$memory_size" "$tool" "$secs" >>"$results"
  echo "  $tool: peak RSS $((kib / 1024)) MiB ($kib KiB), $secs s, e2fsck clean"
done

# --- populate -----------------------------------------------------------------
echo "== populate: $populate_files files in $populate_dirs directories, $populate_size image"
tree=$tmp/tree
python3 - "$tree" "$populate_files" "$populate_dirs" "$seed" <<'PY'
import os, random, sys
root, files, dirs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
top = max(1, int(dirs ** 0.5))
folders = [os.path.join(root, f"d{i // top:02d}", f"e{i % top:02d}") for i in range(dirs)]
for f in folders:
    os.makedirs(f)
total = 0
for i in range(files):
    size = rnd.randrange(0, 64 * 1024 + 1)
    with open(os.path.join(folders[i % dirs], f"f{i:05d}"), "wb") as out:
        out.write(rnd.randbytes(size))
    total += size
print(f"  tree: {files} files, {total / 2**20:.1f} MiB, in {dirs} directories under {top} (seed {seed})")
PY
tree_bytes=$(du -sb "$tree" | cut -f1)
for ((run = 1; run <= runs; run++)); do
  order="nvj mke2fs"
  if ((run % 2 == 0)); then order="mke2fs nvj"; fi
  line="  run $run:"
  for tool in $order; do
    if [[ $tool == nvj ]]; then
      s=$(timed nvj "$run" "$populate_size" "$tmp/$tool.img" --populate "$tree")
    else
      s=$(timed mke2fs "$run" "$populate_size" "$tmp/$tool.img" -d "$tree")
    fi
    printf 'populate\t%s\t%s\t%s\t%s\n' "$populate_size" "$tool" "$run" "$s" >>"$results"
    line+=" $tool $s s"
  done
  echo "$line"
done

# --- report -------------------------------------------------------------------
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
git_rev=$(bench_git_rev)

MS_RESULTS=$results MS_MARKDOWN=$markdown MS_COMMAND=$command_line \
MS_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') MS_GIT=$git_rev \
MS_MKE2FS=$(mke2fs -V 2>&1 | head -n1) MS_KERNEL=$(uname -r) MS_NPROC=$(nproc) \
MS_FS="$fstype" MS_MEMORY_FS="$memory_fs" MS_RUNS=$runs \
MS_LOAD="$load_start at start, $load_end at end ($(nproc) CPUs; other work on the machine adds noise)" \
MS_NVJ=$nvj MS_REPO=$repo_dir MS_SIZES="${sizes[*]}" \
MS_TIME_TARGET=$time_target MS_MEMORY_TARGET=$memory_target_mib \
MS_TREE="$populate_files files of 0 to 64 KiB (uniform, seed $seed), $populate_dirs directories, $((tree_bytes >> 20)) MiB" \
MS_MKE2FS_OPTS="${mke2fs_opts[*]}" \
BENCH_DIR=$script_dir python3 - <<'PY'
import os, statistics, subprocess

env = os.environ
data = {}
for line in open(env["MS_RESULTS"]):
    kind, size, tool, _run, value = line.rstrip("\n").split("\t")
    data.setdefault((kind, size, tool), []).append(float(value))
runs = int(env["MS_RUNS"])
time_target = float(env["MS_TIME_TARGET"])
memory_target = float(env["MS_MEMORY_TARGET"])

def ms(s):
    return f"{s * 1000:.1f}"

time_rows = []
for size in env["MS_SIZES"].split():
    n, m = data[("time", size, "nvj")], data[("time", size, "mke2fs")]
    ratio = statistics.median(m) / statistics.median(n)
    verdict = ("PASS" if ratio >= time_target else "FAIL") if size == "1T" else ""
    time_rows.append((size, statistics.median(n), statistics.median(m), ratio, n, m, verdict))
startup = {t: statistics.median(data[("startup", "-", t)]) for t in ("nvj", "mke2fs")}
mem = {t: data[("memory", "16T", t)][0] for t in ("nvj", "mke2fs")}
mem_time = {t: data[("memory_time", "16T", t)][0] for t in ("nvj", "mke2fs")}
mem_verdict = "PASS" if mem["nvj"] / 1024 < memory_target else "FAIL"
pn, pm = data[("populate", "2G", "nvj")], data[("populate", "2G", "mke2fs")]
pop_ratio = statistics.median(pm) / statistics.median(pn)
pop_verdict = "PASS" if pop_ratio > 1 else "FAIL"

print()
print(f"{'size':>5} {'nvj ms':>9} {'mke2fs ms':>10} {'mke2fs/nvj':>11}")
for size, n, m, r, _, _, verdict in time_rows:
    print(f"{size:>5} {ms(n):>9} {ms(m):>10} {r:>11.2f}  {verdict + (' (target >= ' + str(time_target) + ')' if verdict else '')}")
print(f"start-up alone: nvj mkfs --help {ms(startup['nvj'])} ms, mke2fs -V {ms(startup['mke2fs'])} ms")
print(f"16T peak RSS: nvj {mem['nvj'] / 1024:.1f} MiB, mke2fs {mem['mke2fs'] / 1024:.1f} MiB  {mem_verdict} (target nvj < {memory_target:.0f} MiB)")
print(f"populate 2G: nvj {ms(statistics.median(pn))} ms, mke2fs -d {ms(statistics.median(pm))} ms, "
      f"mke2fs/nvj {pop_ratio:.2f}  {pop_verdict} (target > 1)")

path = env["MS_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## mkfs_speed",
    "",
    "`nvj mkfs` against mke2fs in the same run, on the same filesystem, for the same ext4: 4 KiB blocks, "
    "mke2fs's default internal journal, `" + env["MS_MKE2FS_OPTS"] + "` (lazy_itable_init at its default). "
    f"Wall time, median of {runs} runs, each on a fresh sparse file, the order of the two alternating; each tool's "
    "own fsync at its end is inside its time, a `sync` before each run and creating mke2fs's sparse file "
    "(`truncate -s`) are not. Every image of the first run passed `e2fsck -fn`.",
    "",
    f"- Command: `{env['MS_COMMAND']}`",
    f"- Date: {env['MS_DATE']}",
    f"- Git commit: {env['MS_GIT']}",
    "- nvj: " + (f"`{os.path.relpath(env['MS_NVJ'], env['MS_REPO'])}`"
                 if env["MS_NVJ"].startswith(env["MS_REPO"] + "/") else "a build outside the repository (NVJ)"),
    f"- mke2fs: {env['MS_MKE2FS']}; kernel {env['MS_KERNEL']}, {env['MS_NPROC']} CPUs",
    f"- Images on: {env['MS_FS']} (the 16 TiB ones on {env['MS_MEMORY_FS']})",
    f"- Load average (1/5/15 min): {env['MS_LOAD']}",
    "",
    "| size | nvj mkfs (ms) | mke2fs (ms) | mke2fs / nvj | target | verdict | nvj runs (ms) | mke2fs runs (ms) |",
    "|---|---:|---:|---:|---:|---|---|---|",
]
for size, n, m, r, nr, mr, verdict in time_rows:
    target = f">= {time_target:g}" if verdict else ""
    lines.append(f"| {size} | {ms(n)} | {ms(m)} | {r:.2f} | {target} | {verdict} | "
                 + ", ".join(ms(x) for x in nr) + " | " + ", ".join(ms(x) for x in mr) + " |")
lines += [
    f"| start-up alone (`nvj mkfs --help`, `mke2fs -V`) | {ms(startup['nvj'])} | {ms(startup['mke2fs'])} | | | | | |",
]
lines += [
    "",
    "| 16 TiB, empty | peak RSS (MiB) | wall time (s) | target | verdict |",
    "|---|---:|---:|---:|---|",
    f"| nvj mkfs | {mem['nvj'] / 1024:.1f} | {mem_time['nvj']:.2f} | < {memory_target:.0f} MiB | {mem_verdict} |",
    f"| mke2fs | {mem['mke2fs'] / 1024:.1f} | {mem_time['mke2fs']:.2f} | | |",
    "",
    f"Populate: a 2 GiB image from a tree of {env['MS_TREE']}, in the page cache for both.",
    "",
    "| tool | median (ms) | runs (ms) |",
    "|---|---:|---|",
    f"| nvj mkfs --populate | {ms(statistics.median(pn))} | " + ", ".join(ms(x) for x in pn) + " |",
    f"| mke2fs -d | {ms(statistics.median(pm))} | " + ", ".join(ms(x) for x in pm) + " |",
    "",
    f"mke2fs -d / nvj --populate: {pop_ratio:.2f} (target > 1): {pop_verdict}",
]
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "mkfs_speed", path],
               input=section, text=True, check=True)
PY
