#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj experiment chinner2012 --quick end to end: 4 and 16 threads each
# writing one file (256 MiB in all) onto the disk model, ext4 and XFS, each
# point on a fresh filesystem. Every point has the disk's view of the
# writes (every byte of the files reached the disk; requests, their mean
# size, the sequential fraction, seeks whose distance histogram adds up,
# busy time), extents per file from filefrag, and a read-back from a cold
# cache that read every byte from the disk; each filesystem clean by its
# own checker; the report's files written; the host's dirty-page limits,
# scaled down for the writes, put back; no leftovers.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_filesystems xfs
for c in mkfs.xfs xfs_repair filefrag; do command -v "$c" >/dev/null || skip "$c is not installed"; done

dirty() { cat /proc/sys/vm/dirty_background_bytes /proc/sys/vm/dirty_background_ratio /proc/sys/vm/dirty_bytes \
  /proc/sys/vm/dirty_ratio | tr '\n' ' '; }
before=$(dirty)
out="$T/out"
run_experiment chinner2012 --quick --out "$out"
[ "$(dirty)" = "$before" ] || fail "the host's dirty-page limits were not put back: $(dirty), before $before"
expect_files "$out" results.json table.md throughput.png throughput.svg extents.png extents.svg \
  seek_distance.png seek_distance.svg
valid_json chinner2012.results.schema.json "$out/results.json"
grep -q '^| filesystem | threads | file MiB | write MiB/s |' "$T/log" || fail "no table in the output"
python3 - "$out/results.json" <<'PY' || fail "results.json does not show what it should"
import json, sys
r = json.load(open(sys.argv[1]))
pts = r["points"]
assert [(p["filesystem"], p["threads"]) for p in pts] == [("ext4", 4), ("ext4", 16), ("xfs", 4), ("xfs", 16)], pts
total = r["total_mib"] << 20
for p in pts:
    name = f"{p['filesystem']}/{p['threads']}"
    assert p["check_clean"], name
    assert p["file_mib"] * p["threads"] == r["total_mib"], name
    w, rd = p["write"], p["read"]
    assert w["bytes"] >= total, (name, w["bytes"])      # every byte of the files, and metadata
    assert rd["bytes"] >= total, (name, rd["bytes"])    # read back from the disk, not a cache
    for v in (w, rd):
        assert v["requests"] > 0 and v["mib_per_second"] > 0 and v["device_ms"] > 0, (name, v)
        assert sum(v["seek_distance"].values()) == v["seeks"], (name, v)
        assert abs(v["mean_request_kib"] * v["requests"] * 1024 - v["bytes"]) <= v["requests"] * 1024 * 0.1, (name, v)
    assert p["extents_per_file_max"] >= p["extents_per_file_mean"] >= 1, name
print("; ".join(f"{p['filesystem']}/{p['threads']}: write {p['write']['mib_per_second']} MiB/s, "
                f"{p['extents_per_file_mean']} extents/file, read {p['read']['mib_per_second']} MiB/s" for p in pts))
PY
head -c 4 "$out/throughput.png" | grep -q PNG || fail "throughput.png is not a PNG"
grep -q '<svg' "$out/seek_distance.svg" || fail "seek_distance.svg is not an SVG"
echo "PASS"
