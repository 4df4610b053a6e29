#!/bin/bash
# nvj experiment enospc2015 --quick end to end: small ext4 volumes on the
# NVRAM and disk models filled by dd, by untar after untar and by 1000
# parallel writers. Runs meant to fit finish; runs meant to overflow end on
# ENOSPC near full; after a clean remount every acknowledged write reads
# back (dd's bytes, every complete tree, every writer's chunks); every
# filesystem e2fsck-clean; the report's files written; no leftovers.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

out="$T/out"
run_experiment enospc2015 --quick --out "$out"
expect_files "$out" results.json table.md time.png time.svg fill.png fill.svg untar.png untar.svg
valid_json enospc2015.results.schema.json "$out/results.json"
grep -q '^| test | volume | size | ended | time s | fill |' "$T/log"
grep -q '^| volume | copy | time s | transactions | journal full s |' "$T/log"
python3 - "$out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"]
assert len(runs) == 10, len(runs)
for x in runs:
    assert x["fsck_clean"], x
    assert x["acknowledged_intact"], x
    if x["test"] in ("dd-far", "writers-far"):
        assert not x["failed"], x
    else:
        assert x["enospc"], x
        assert x["fill"] > 0.9, x
    if x["test"] == "writers-far":
        assert x["fill"] < 0.5, x
    if x["test"] == "untar":
        assert len(x["copies"]) >= 3, x
        # What the server saw, copy by copy: something written during the run.
        assert sum(c["journal_mib"] + c["data_mib"] for c in x["copies"]) > 0, x
print("results.json: 10 runs, overflows end on ENOSPC above 90% full, nothing acknowledged lost, clean")
PY
head -c 4 "$out/untar.png" | grep -q PNG
grep -q '<svg' "$out/fill.svg"
echo "PASS"
