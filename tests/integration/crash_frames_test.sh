#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj crash frames: what the exports saw around a crash state, checked
# against truths of its own making:
#   - a workload on this host's kernel (files, a fragmented file with an
#     extent tree block, a long symlink, an attribute block, a rename, nvj
#     writers with its facts) recorded with nobarrier (a planted fault: the
#     disk's cache is never flushed), into file-backed exports that keep the
#     final filesystem; states fail;
#   - a failing state's frames: each change the check's own report
#     (results.json's kept_changes, dropped_changes) says the state kept or
#     dropped is listed kept or dropped, none of the others is, changes sent
#     after the point are "after"; the JSON is valid (crash-frames); the
#     text marks where the power is cut;
#   - every block the recording wrote on the data export, named as the
#     filesystem is at the end: e2fsprogs' debugfs on the final image says
#     the same (icheck and ncheck for a file's, a directory's or a symlink's
#     blocks, with bmap for which of its blocks; imap for the inode table;
#     the group's bitmaps and table from stats; File ACL for an attribute
#     block; ex for an extent tree's index; testb for blocks nothing owns);
#   - every block it wrote on the journal export: a reading of the final
#     journal of the test's own (descriptors and their tags, commit blocks)
#     agrees with what the listing says of the last write to each log block;
#   - bad input: no --state nor --point, both, a state or point past the
#     last, words for numbers, a file that is no recording: exit 2, naming it.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v debugfs >/dev/null || skip "debugfs is not installed (e2fsprogs)"

cat >"$T/work.sh" <<'EOF'
#!/bin/sh
set -e
mkdir -p d/e
head -c 20000 /dev/urandom >d/a
i=0
while [ $i -lt 12 ]; do  # a block every third: twelve extents, more than the inode holds
  dd if=/dev/urandom of=frag bs=1024 count=1 seek=$((i * 3)) conv=notrunc status=none
  sync
  i=$((i + 1))
done
ln -s "$(printf 'x%.0s' $(seq 1 100))" d/longlink
python3 -c 'import os; os.setxattr("d/a", "user.big", b"v" * 600)'
mv d/a d/e/b
"$NVJ" writers --tasks 2 --chunks 4 --chunk-size 4K --fsync each w >/dev/null
EOF
chmod +x "$T/work.sh"
export NVJ
run_crash "$T/run.log" run --out "$T/run" --verify failing --mount-options nobarrier \
  data-file="$T/data.img" journal-file="$T/journal.img" -- "$T/work.sh"
[ "$STATUS" = 1 ] || fail "nvj crash run with nobarrier exited $STATUS, not 1 (failing states)"
rec=$T/run/recording.nvjrec

# A failing state the check detailed: its kept and dropped changes.
python3 - "$T/run/results.json" >"$T/picked" <<'PY' || fail "no detailed failing state in results.json"
import json, sys
r = json.load(open(sys.argv[1]))
s = next(s for s in r["states"] if s["verdict"] != "pass" and "dropped_changes" in s and s["dropped_changes"])
print(s["ordinal"], s["point"])
PY
read -r ordinal point <"$T/picked"
"$NVJ" crash frames "$rec" --state "$ordinal" --json >"$T/state.json" || fail "nvj crash frames --state $ordinal failed"
check_json crash-frames "$T/state.json"
python3 - "$T/run/results.json" "$T/state.json" "$ordinal" <<'PY' || fail "the frames disagree with the check's report of state $ordinal"
import json, sys
r, f, ordinal = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
s = next(s for s in r["states"] if s["ordinal"] == ordinal)
kept = {c["frame"] for c in s["kept_changes"]}
dropped = {c["frame"] for c in s["dropped_changes"]}
assert f["state"]["ordinal"] == ordinal and f["point"]["number"] == s["point"], (f["state"], f["point"])
assert f["point"]["after_frame"] == s["frame"], (f["point"], s["frame"])
changes = [x for x in f["frames"] if x["kind"] in ("write", "zero", "trim")]
seen = set()
for x in changes:
    n, fate = x["frame"], x["in_state"]
    if n > s["frame"]:
        assert fate == "after", x
    elif n in dropped:
        assert fate == "dropped", x
    elif n in kept:
        assert fate == "kept", x
    else:
        assert fate == "durable", x
    seen.add(n)
    assert x["meaning"] and sum(m["length"] for m in x["meaning"]) == x["length"], x
# The listing starts before the oldest volatile change: every dropped one is in it.
assert dropped <= seen and kept <= seen, (sorted(dropped - seen), sorted(kept - seen))
assert len(dropped) == s["volatile"] - s["kept"] - (1 if s.get("torn") else 0), (len(dropped), s["volatile"], s["kept"])
print(f"state {ordinal}: {len(changes)} changes listed, {len(dropped)} dropped, {len(kept)} kept", file=sys.stderr)
PY
"$NVJ" crash frames "$rec" --state "$ordinal" >"$T/state.txt" || fail "nvj crash frames (text) failed"
head -n 6 "$T/state.txt"
grep -q "^$rec: state $ordinal: crash point $point, strategy " "$T/state.txt" || fail "the text does not name the state"
grep -q "^------- the power is cut here (crash point $point) -------$" "$T/state.txt" || fail "the text does not mark the cut"
grep -Eq " dropped +" "$T/state.txt" || fail "the text lists no dropped change"

# Every block written, against the final filesystem (the exports' files).
points=$("$NVJ" crash states --json "$rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["points"]["total"])')
"$NVJ" crash frames "$rec" --point $((points - 1)) --all --json >"$T/all.json" || fail "nvj crash frames --all failed"
check_json crash-frames "$T/all.json"
python3 - "$T/all.json" "$T/data.img" "$T/journal.img" <<'PY' || fail "the blocks' meanings disagree with debugfs or the journal"
import json, re, subprocess, sys
frames, image, journal = json.load(open(sys.argv[1]))["frames"], sys.argv[2], sys.argv[3]

def debugfs(commands):
    """Each command's output, from one debugfs run on the final image."""
    out = subprocess.run(["debugfs", "-c", "-f", "-", image], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, check=True).stdout
    parts = re.split(r"^debugfs: ", out, flags=re.M)[1:]
    assert len(parts) == len(commands), (len(parts), len(commands))
    return [p.split("\n", 1)[1] if "\n" in p else "" for p in parts]

stats = debugfs(["stats"])[0]
field = lambda name: int(re.search(rf"^{name}:\s+(\d+)", stats, re.M).group(1))
bs, first_data, per_group = field("Block size"), field("First block"), field("Blocks per group")
per_block = bs // field("Inode size")
table_blocks = field("Inodes per group") // per_block
groups = {int(g): {"block bitmap": int(b), "inode bitmap": int(i), "table": int(t)}
          for g, b, i, t in re.findall(r"^ Group\s+(\d+): block bitmap at (\d+), inode bitmap at (\d+), inode table at (\d+)",
                                       stats, re.M)}
assert groups, stats[:2000]

# What the listing says of each block of the data export (the last word wins: all the same, read at the end).
said = {}
for f in frames:
    if f["export"] != "data" or f["kind"] != "write":
        continue
    for m in f["meaning"]:
        for b in range(m["offset"] // bs, (m["offset"] + m["length"] - 1) // bs + 1):
            said[b] = (m["what"], b - m["offset"] // bs)
print(f"{len(said)} blocks of the data export named", file=sys.stderr)
inodes = set()
for what, _ in said.values():
    inodes |= {int(n) for n in re.findall(r"\(inode (\d+)\)", what)}
blocks = sorted(said)
icheck = debugfs([f"icheck {' '.join(map(str, blocks))}"])[0]
owner = {int(a): (None if b == "<block not found>" else int(b))
         for a, b in re.findall(r"^(\d+)\s+(\S.*?)\s*$", icheck, re.M) if a.isdigit()}
ninodes = sorted(inodes)
names = debugfs([f"ncheck {' '.join(map(str, ninodes))}"])[0]
path_of = {int(i): p.lstrip("/") for i, p in re.findall(r"^(\d+)\s+(\S.*?)\s*$", names, re.M)}
path_of[2] = ""  # ncheck names no path for the root
details = dict(zip(ninodes, debugfs([f"stat <{i}>" for i in ninodes])))
trees = dict(zip(ninodes, debugfs([f"ex <{i}>" for i in ninodes])))
checked = {}
for b in blocks:
    what, nth = said[b]
    what = re.sub(r" \(x\d+\)$", "", what)  # the same for several blocks in a row
    kind = re.match(r"file data|directory|symlink target|extent tree|xattr block|inode table|block bitmap|inode bitmap|"
                    r"superblock|group descriptors|no owner|", what).group(0)
    m = re.match(r"(file data|directory|symlink target) of (.+?) \(inode (\d+)\)(?: \(unwritten\))?, blocks? (\d+)", what)
    if m:
        path, ino, logical = m.group(2), int(m.group(3)), int(m.group(4)) + nth
        assert owner.get(b) == ino, (b, what, owner.get(b))
        assert path_of.get(ino) == path.strip("/"), (b, what, path_of.get(ino))
        bmap = debugfs([f"bmap <{ino}> {logical}"])[0].strip()
        assert bmap == str(b), (b, what, bmap)
    elif (m := re.match(r"(extent tree|xattr block) of (.+?) \(inode (\d+)\)$", what)):
        ino = int(m.group(3))
        assert path_of.get(ino) == m.group(2), (b, what, path_of.get(ino))
        if m.group(1) == "xattr block":
            assert re.search(rf"File ACL: {b}\b", details[ino]), (b, what)
        else:  # a node below the root: the child of an index entry (a level above the leaves)
            rows = [r.split() for r in trees[ino].splitlines() if re.match(r"\s*\d+/\s*\d+ ", r)]
            children = {int(r[7]) for r in rows if int(r[0].rstrip("/")) < int(r[1])}
            assert b in children, (b, trees[ino])
    elif (m := re.match(r"inode table of group (\d+), inodes (\d+)-(\d+)", what)):
        g, first = int(m.group(1)), int(m.group(2)) + nth * per_block
        assert groups[g]["table"] <= b < groups[g]["table"] + table_blocks, (b, what, groups[g])
        imap = debugfs([f"imap <{first}>"])[0]
        assert re.search(rf"located at block {b}, offset 0x0+$", imap, re.M), (b, what, imap)
    elif (m := re.match(r"(block|inode) bitmap(?: of group (\d+))?$", what)):
        g = int(m.group(2) or 0)
        assert groups[g][f"{m.group(1)} bitmap"] == b, (b, what, groups[g])
    elif (m := re.match(r"(superblock|group descriptors)(?: of group (\d+))?$", what)):
        # A write of the table's later blocks alone starts its run there:
        # which of the table's blocks it is, only the range tells.
        start = first_data + int(m.group(2) or 0) * per_group
        desc_size = int(d.group(1)) if (d := re.search(r"^Group descriptor size:\s+(\d+)", stats, re.M)) else 32
        desc_blocks = (len(groups) * desc_size + bs - 1) // bs
        if m.group(1) == "superblock":
            assert b == start, (b, what, start)
        else:
            assert start + 1 + nth <= b < start + 1 + desc_blocks, (b, what, start, nth, desc_blocks)
    elif what.startswith("no owner"):
        assert "not in use" in debugfs([f"testb {b}"])[0], (b, what)
    else:
        raise AssertionError(f"block {b}: a meaning the test does not know: {what}")
    checked[kind] = checked.get(kind, 0) + 1
for needed in ("file data", "directory", "symlink target", "extent tree", "xattr block", "inode table", "block bitmap",
               "inode bitmap", "superblock"):
    assert checked.get(needed, 0) > 0, (needed, checked)
print("data export, blocks checked by kind:", checked, file=sys.stderr)

# The journal: its final contents read here, descriptor by descriptor.
raw = open(journal, "rb").read()
sb = next(o for o in range(0, 8192, 1024) if raw[o:o + 4] == b"\xc0\x3b\x39\x98" and
          int.from_bytes(raw[o + 4:o + 8], "big") in (3, 4))
jbs = int.from_bytes(raw[sb + 12:sb + 16], "big")
incompat = int.from_bytes(raw[sb + 40:sb + 44], "big")
csum3, bit64 = incompat & 0x10, incompat & 0x2
tag_bytes = 16 if csum3 else (12 if bit64 else 8)
last_write = {}
for f in frames:
    if f["export"] == "journal" and f["kind"] == "write":
        for m in f["meaning"]:
            for blk in range(m["offset"] // jbs, (m["offset"] + m["length"] - 1) // jbs + 1):
                last_write[blk] = m["what"]
logged, kinds = {}, {}
for blk in range(len(raw) // jbs):
    b = raw[blk * jbs:(blk + 1) * jbs]
    if b[:4] != b"\xc0\x3b\x39\x98":
        continue
    btype, seq = int.from_bytes(b[4:8], "big"), int.from_bytes(b[8:12], "big")
    kinds[blk] = (btype, seq)
    if btype != 1:
        continue
    at, n = 12, blk
    while at + tag_bytes <= jbs - (4 if csum3 else 0):
        target = int.from_bytes(b[at:at + 4], "big") | (int.from_bytes(b[at + 8:at + 12], "big") << 32 if bit64 else 0)
        flags = int.from_bytes(b[at + 4:at + 8], "big") if csum3 else int.from_bytes(b[at + 6:at + 8], "big")
        n += 1
        logged[n] = (seq, target)
        at += tag_bytes + (0 if flags & 2 else 16)
        if flags & 8:
            break
agree = 0
for blk, what in last_write.items():
    m = re.match(r"journal log block (\d+): (.*)$", what)
    assert m and int(m.group(1)) == blk, (blk, what)
    rest = m.group(2)
    if rest.startswith("jbd2 descriptor") or rest.startswith("jbd2 commit"):
        t = 1 if "descriptor" in rest else 2
        assert kinds.get(blk) == (t, int(re.search(r"tid (\d+)", rest).group(1))), (blk, what, kinds.get(blk))
        agree += 1
    elif (m := re.match(r"tid (\d+) logs a copy of block (\d+)", rest)):
        assert logged.get(blk) == (int(m.group(1)), int(m.group(2))), (blk, what, logged.get(blk))
        agree += 1
assert agree >= 10, agree
print(f"journal: {agree} log blocks agree with the final journal", file=sys.stderr)
PY

# Bad input.
bad() {  # bad WHAT ARGS...: exit 2, naming WHAT
  local what=$1 status=0; shift
  "$NVJ" crash frames "$@" >"$T/bad.log" 2>&1 || status=$?
  [ "$status" = 2 ] || { cat "$T/bad.log"; fail "nvj crash frames $*: exit $status, not 2"; }
  grep -q -- "$what" "$T/bad.log" || { cat "$T/bad.log"; fail "nvj crash frames $*: the message does not name $what"; }
}
bad "give --state N" "$rec"
bad "give --state N" "$rec" --state 1 --point 1
bad "no state 99999999" "$rec" --state 99999999
bad "--point $points: the recording has $points crash points" "$rec" --point "$points"
bad "--state one: expected a state's ordinal" "$rec" --state one
bad "not a recording" "$T/data.img" --point 0
bad "cannot open $T/none" "$T/none" --point 0
echo "PASS"
