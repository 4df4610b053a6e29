#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# differential.sh: the fast path checked against the kernel. Recordings of
# several kinds are made on this host (nvj crash record) and every state a
# check takes of each is judged twice: by the fast path, and by this host's
# kernel (a mount with the same facts read back, then e2fsck -fn; a mount
# refused: needs_fsck): nvj crash check --verify all. The recordings:
#   writers-nobarrier   nvj writers, nobarrier: no flush ever, every write volatile
#   writers-torn-4k     4 KiB blocks, the internal journal on a disk tearing at
#                       512 bytes, nobarrier, on a journal that has wrapped
#                       (torn commit blocks), torn states
#   writers-datajournal data=journal, an external journal on NVRAM, torn states
#   writers-1k-internal 1 KiB blocks, the journal inside, torn at 512 bytes
#   writers-async       data=writeback,journal_async_commit, the journal inside
#   writers-v1-32bit    no metadata_csum nor 64bit, journal_checksum: the kernel's
#                       v1 (crc32) commit checksums and 32-bit tags; nobarrier, torn
#   writers-v1-async    the same with journal_async_commit
#   mixed-nobarrier     bench/lib/mixed_workload.py: 4 processes of 300 random
#                       creates, writes, truncates, links, renames, unlinks,
#                       xattrs, mkdir and rmdir, nobarrier: structural damage
#                       (e2fsck's, on both sides) with no fact to break
#   mixed               the same with barriers
#   explore-seq2 / -seq3  workloads of the explorer's bounds (every operation),
#                       --explore N of each drawn by --seed, every state
# It prints, and with --markdown writes to FILE (its section "differential"), the agreement by verdict:
# for each recording and in all, the states checked, the fast path's
# verdicts, and how many the kernel judged the same (verdict and the paths
# broken). Needs root (loop devices, mounts).
#
# Usage: bench/differential.sh [--nvj PATH] [--states N] [--explore N] [--seed N] [--out DIR] [--markdown FILE]
#
# --states N: states taken of each writers recording (default 2000; the
# states of a check are a sample spread over its crash points). --explore
# N: workloads of seq-2 and of seq-3 (default 10 each). With --markdown the
# working tree must be clean: the section names the commit it came from.
source "$(dirname "$0")/lib/options.sh"
source "$repo_dir/tests/support/wrapped_journal.sh"

nvj="$repo_dir/build/tools/nvj/nvj"
states=2000
explore=10
seed=1
out=""
markdown=""
bench_option --nvj nvj text
bench_option --states states count
bench_option --explore explore count
bench_option --seed seed count
bench_option --out out text
bench_option --markdown markdown text
bench_parse "$@"
bench_require nbdkit nbdfuse mkfs.ext4:e2fsprogs e2fsck:e2fsprogs python3
[[ -z $markdown ]] || bench_require_clean_tree
[[ $(id -u) == 0 ]] || bench_fail "needs root (loop devices and mounts)"
[[ -x $nvj ]] || bench_fail "no nvj at $nvj (build first, or --nvj PATH)"

dir=${out:-$(mktemp -d -t nvj-differential-XXXXXX)}
mkdir -p "$dir"
[[ -n $out ]] || trap 'rm -rf "$dir"' EXIT
start=$(date +%s)

record() {  # record NAME MOUNT_OPTIONS PARAM... -- COMMAND...
  local name=$1 options=$2
  shift 2
  echo "== recording $name"
  "$nvj" crash record --out "$dir/$name" ${options:+--mount-options "$options"} "$@" >"$dir/$name.record.log" 2>&1 ||
    { cat "$dir/$name.record.log"; bench_fail "recording $name failed"; }
}

check() {  # check NAME RECORDING MOUNT_OPTIONS STATE_OPTION...
  local name=$1 recording=$2 options=$3
  shift 3
  local status=0
  "$nvj" crash check "$recording" ${options:+--mount-options "$options"} --verify all "$@" --out "$dir/checks/$name" \
    >"$dir/checks/$name.log" 2>&1 || status=$?
  [[ $status == 0 || $status == 1 ]] || { cat "$dir/checks/$name.log"; bench_fail "checking $name: exit $status"; }
  echo "   $name: $(tail -n 1 "$dir/checks/$name.log")"
}

mkdir -p "$dir/checks"
writers=("$nvj" writers --tasks 4 --dirs 2 --chunks 8 --chunk-size 4K --fsync each w)

record writers-nobarrier nobarrier -- "${writers[@]}"
check writers-nobarrier "$dir/writers-nobarrier/recording.nvjrec" nobarrier --max-states "$states"

# A journal that has wrapped: its old transactions under the new ones.
wrapped_journal_image "$dir/wrapped.img" "$dir/mnt" || bench_fail "no ext4 with a wrapped journal (see above)"
record writers-torn-4k nobarrier data= journal= data-file="$dir/wrapped.img" fs-journal=internal \
  data-model=hdd:atomic=512 journal-model=hdd:atomic=512 -- "$nvj" writers --tasks 2 --dirs 1 --chunks 3 --chunk-size 4K --fsync each w
check writers-torn-4k "$dir/writers-torn-4k/recording.nvjrec" nobarrier --keep 0 --torn 16 --max-states "$states"

record writers-datajournal data=journal -- "${writers[@]}"
check writers-datajournal "$dir/writers-datajournal/recording.nvjrec" data=journal --torn 4 --torn-unit 512 --max-states "$states"

record writers-1k-internal "" fs-journal=internal fs-block-size=1024 data-model=hdd:atomic=512 journal-model=hdd:atomic=512 -- "${writers[@]}"
check writers-1k-internal "$dir/writers-1k-internal/recording.nvjrec" "" --torn 8 --max-states "$states"

record writers-async data=writeback,journal_async_commit fs-journal=internal fs-block-size=4096 -- "${writers[@]}"
check writers-async "$dir/writers-async/recording.nvjrec" data=writeback,journal_async_commit --torn 4 --torn-unit 512 --max-states "$states"

# Journals the kernel writes with v1 checksums (crc32) and 32-bit tags: an
# ext4 without metadata_csum and 64bit, mounted with journal_checksum (and
# with journal_async_commit), the journal inside.
truncate -s 256M "$dir/v1.img"
mkfs.ext4 -q -F -O ^metadata_csum,^64bit -b 4096 "$dir/v1.img"
record writers-v1-32bit nobarrier,journal_checksum data= journal= data-file="$dir/v1.img" fs-journal=internal \
  data-model=hdd:atomic=512 journal-model=hdd:atomic=512 -- "${writers[@]}"
check writers-v1-32bit "$dir/writers-v1-32bit/recording.nvjrec" nobarrier,journal_checksum --torn 8 --max-states "$states"
truncate -s 256M "$dir/v1-async.img"
mkfs.ext4 -q -F -O ^metadata_csum,^64bit -b 4096 "$dir/v1-async.img"
record writers-v1-async data=writeback,journal_async_commit data= journal= data-file="$dir/v1-async.img" fs-journal=internal \
  -- "${writers[@]}"
check writers-v1-async "$dir/writers-v1-async/recording.nvjrec" data=writeback,journal_async_commit --torn 4 --torn-unit 512 \
  --max-states "$states"

mixed=(python3 "$script_dir/lib/mixed_workload.py" --procs 4 --ops 300 --seed "$seed" .)
record mixed-nobarrier nobarrier -- "${mixed[@]}"
check mixed-nobarrier "$dir/mixed-nobarrier/recording.nvjrec" nobarrier --max-states "$states"
record mixed "" -- "${mixed[@]}"
check mixed "$dir/mixed/recording.nvjrec" "" --max-states "$states"

for bound in seq-2 seq-3; do
  # How many workloads the bound has: the refusal of an ordinal past them says.
  count=$("$nvj" crash explore --bound "$bound" --workload 999999999999 --out "$dir/none" 2>&1 |
    sed -n 's/.*(seq-[0-9] has \([0-9]*\) workloads).*/\1/p' || true)
  picks=$(python3 -c 'import random, sys; r = random.Random(int(sys.argv[1])); n = int(sys.argv[2]); print(",".join(str(r.randrange(n)) for _ in range(int(sys.argv[3]))))' \
    "$seed" "${count:-0}" "$explore" 2>/dev/null || true)
  [[ -n $picks && ${count:-0} -gt 0 ]] || bench_fail "nvj crash explore --bound $bound: how many workloads it has is not known"
  echo "== exploring $bound: workloads $picks"
  "$nvj" crash explore --bound "$bound" --workload "$picks" --no-minimize --out "$dir/explore-$bound" \
    >"$dir/explore-$bound.log" 2>&1 || true
  for rec in "$dir/explore-$bound"/workloads/*/recording.nvjrec; do
    n=$(basename "$(dirname "$rec")")
    check "explore-$bound-$n" "$rec" "" --max-states 0
  done
done

seconds=$(( $(date +%s) - start ))
# The command as RESULTS.md shows it: where this machine kept its files is no part of it.
[[ -z $out ]] || command_line=${command_line//"$out"/DIR}
DIFF_DIR=$dir/checks DIFF_COMMAND=$command_line DIFF_SECONDS=$seconds DIFF_MARKDOWN=$markdown DIFF_REV="$(bench_git_rev)" \
  BENCH_DIR=$script_dir python3 - <<'PY'
import json, os, glob, collections, re, subprocess
rows = collections.OrderedDict()
total = collections.Counter()
for path in sorted(glob.glob(os.path.join(os.environ["DIFF_DIR"], "*", "results.json"))):
    name = os.path.basename(os.path.dirname(path))
    group = name.rsplit("-", 1)[0] if name.startswith("explore-") else name
    r = json.load(open(path))
    c = rows.setdefault(group, collections.Counter())
    for s in r["states"]:
        v = s["verdict"]
        c["states"] += 1
        c[v] += 1
        if s.get("agree"):
            c["agree"] += 1
            c["agree " + v] += 1
        else:
            c["disagree " + v + " / kernel " + s["ground_truth"]["verdict"]] += 1
for c in rows.values():
    total.update(c)
verdicts = ["pass", "fail", "needs_fsck", "unreadable"]
lines = ["| recording | states | " + " | ".join(f"{v} (kernel agrees)" for v in verdicts) + " | agree |",
         "|---|---:|" + "---:|" * len(verdicts) + "---:|"]
def row(name, c):
    cells = [f"{c[v]} ({c['agree ' + v]})" for v in verdicts]
    return f"| {name} | {c['states']} | " + " | ".join(cells) + f" | {c['agree']} of {c['states']} |"
for name, c in rows.items():
    lines.append(row(name, c))
lines.append(row("**all**", total))
table = "\n".join(lines)
dis = [f"- {k[len('disagree '):]}: {n}" for k, n in sorted(total.items()) if k.startswith("disagree ")]
print(table)
print("\n".join(dis) if dis else "no disagreement")
print(f"{total['states']} states in {os.environ['DIFF_SECONDS']} s")
structure = collections.Counter()
for path in glob.glob(os.path.join(os.environ["DIFF_DIR"], "*", "results.json")):
    r = json.load(open(path))
    line = re.search(r"^structure \(e2fsck -fn on each recovered metadata image\): (\d+) images for (\d+) states$",
                     open(os.path.dirname(path) + ".log").read(), re.M)
    if line:
        structure["images"] += int(line[1])
        structure["judged"] += int(line[2])
    structure["damaged"] += sum(s["verdict"] == "unreadable" and s.get("error", "").startswith("e2fsck -fn") for s in r["states"])
note = (f"The fast path's structure check (e2fsck -fn on each recovered metadata image) ran {structure['images']} times"
        f" for {structure['judged']} states; {structure['damaged']} states had damage only e2fsck"
        " sees (no fact broken, the mount reads them).")
print(note)
if os.environ.get("DIFF_MARKDOWN"):
    section = [
        "## differential",
        "",
        f"The fast path against the kernel, state by state: `{os.environ['DIFF_COMMAND']}` at {os.environ['DIFF_REV']},"
        f" {os.environ['DIFF_SECONDS']} s. Every state judged by the fast path (its facts, then e2fsck -fn on the"
        " structure its recovery left) and by this host's kernel (mount, facts, e2fsck -fn; a refused mount is"
        " needs_fsck).",
        "",
        table,
        "",
        ("Disagreements (fast path / kernel):\n\n" + "\n".join(dis)) if dis else "No disagreement.",
        "",
        note,
    ]
    subprocess.run([os.path.join(os.environ["BENCH_DIR"], "lib", "results_section.py"), "differential",
                    os.environ["DIFF_MARKDOWN"]], input="\n".join(section) + "\n", text=True, check=True)
PY
