#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj experiment phillips2014 --quick end to end: a 2000-file tree untarred
# onto the disk model as ext4, XFS and btrfs, then ls -R and tar c from a
# cold cache. Every phase has the disk's view (requests, seeks and their
# distances, busy time); ls -R and tar c read from the disk (the caches
# were dropped), tar c reads the whole tree back; the directory packing the
# seed measured shows in the seeks: ext4's ls -R (directories packed
# together by flex_bg) needs fewer seeks than XFS's (a directory's inodes
# in its own allocation group); each filesystem clean by its own checker;
# the report's files written; --fs picks and orders filesystems, a bad one
# is a usage error; no leftovers.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs btrfs
for c in mkfs.xfs xfs_repair mkfs.btrfs btrfs; do command -v "$c" >/dev/null || skip "$c is not installed"; done

out="$T/out"
run_experiment phillips2014 --quick --out "$out"
expect_files "$out" results.json table.md time.png time.svg seeks.png seeks.svg
valid_json phillips2014.results.schema.json "$out/results.json"
grep -q '^| filesystem | operation | time s | reads | MiB read |' "$T/log" || fail "no table in the output"
python3 - "$out/results.json" <<'PY' || fail "results.json does not show what it should"
import json, sys
r = json.load(open(sys.argv[1]))
fss = r["filesystems"]
assert [f["filesystem"] for f in fss] == ["ext4", "xfs", "btrfs"], [f["filesystem"] for f in fss]
tree_bytes = None
for f in fss:
    assert f["check_clean"], f
    p = {x["operation"]: x for x in f["phases"]}
    assert p["untar"]["write_bytes"] > 20 << 20, (f["filesystem"], p["untar"])
    for op in ("ls -R", "tar c"):
        assert p[op]["reads"] > 0 and p[op]["seeks"] > 0 and p[op]["device_ms"] > 0, (f["filesystem"], op, p[op])
        assert sum(p[op]["seek_distance"].values()) == p[op]["seeks"], (f["filesystem"], op)
    # tar c read the tree back from the disk: at least the files' bytes.
    assert p["tar c"]["read_bytes"] > 20 << 20, (f["filesystem"], p["tar c"])
by = {f["filesystem"]: {x["operation"]: x for x in f["phases"]} for f in fss}
assert by["ext4"]["ls -R"]["seeks"] < by["xfs"]["ls -R"]["seeks"], \
    f"ext4's ls -R took {by['ext4']['ls -R']['seeks']} seeks, XFS's {by['xfs']['ls -R']['seeks']}"
print("ls -R seeks: " + ", ".join(f"{k} {v['ls -R']['seeks']}" for k, v in by.items()) +
      "; tar c seeks: " + ", ".join(f"{k} {v['tar c']['seeks']}" for k, v in by.items()))
PY
head -c 4 "$out/seeks.png" | grep -q PNG || fail "seeks.png is not a PNG"
grep -q '<svg' "$out/time.svg" || fail "time.svg is not an SVG"

status=0
"$NVJ" experiment phillips2014 --quick --fs ext4,zfs --out "$T/bad" >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "'zfs' is not ext4, xfs or btrfs" "$T/e1" || fail "--fs ext4,zfs: exit $status, $(cat "$T/e1")"
status=0
"$NVJ" experiment phillips2014 --quick --fs xfs,xfs --out "$T/bad" >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "xfs twice" "$T/e2" || fail "--fs xfs,xfs: exit $status, $(cat "$T/e2")"
echo "PASS"
