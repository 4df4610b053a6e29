#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj crash run end to end on this host: the workload runs in the mounted
# filesystem's root with NVJ_MNT and NVJ_CONTROL set, its facts reach the
# recording, every state is checked, and nothing is left behind (server,
# loop devices, mounts, the run folder).
#   - nvj writers --fsync each with data=journal: no state fails, exit 0;
#   - a script that posts a file fact without the fsync: states fail on that
#     file, exit 1, the recording and results.json kept in --out;
#   - its report: table.md names the broken fact, states.dat has a row per
#     crash point checked, the plots are drawn; nvj crash report writes the
#     same table.md again, and refuses a shard's results;
#   - the known bug's workload on this host's kernel (nvj writers
#     --overwrite --fsync each, data=ordered, the journal on NVRAM): no
#     state fails, torn ones neither (cut at 4 KiB, and at 512 bytes), by
#     the fast path and by the kernel, where Debian 12's kernel in a guest
#     loses fsynced rewrites (crash_vm_test.sh); a unit that is not whole
#     sectors is refused; a tear that alone breaks a fact (an O_DIRECT
#     overwrite said durable without its flush) is named as the cause, in
#     the file's data, the kernel agreeing;
#   - a fact false where every write landed: the final state breaks it and
#     the check says the facts are wrong (the liar's final state holds);
#   - bad input: no workload, a parameter that is no PARAM=VALUE, an --out
#     that holds a recording already, nvj crash report without RESULTS or
#     of a missing file, --torn past its bound: exit 2 or 1, naming what is
#     wrong.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

run_crash "$T/good.log" run --out "$T/good" --mount-options data=journal journal=16M data=128M -- \
  "$NVJ" writers --tasks 8 --dirs 2 --chunks 8 --chunk-size 4K --fsync each w
[ "$STATUS" = 0 ] || fail "nvj crash run of nvj writers exited $STATUS"
grep -q "mounting the ext4 the server built .* with data=journal" "$T/good.log" || fail "not mounted with data=journal"
grep -q "data=128M" "$T/good.log" || fail "the parameter given did not replace the default"
tail -n 1 "$T/good.log" | grep -Eq '^[0-9]+ states checked in [0-9.]+ s \([0-9]+ states/s\), 0 failing$' ||
  fail "the last line is not the summary"
[ -s "$T/good/recording.nvjrec" ] || fail "the recording is not in --out"
check_json crash-results "$T/good/results.json"
python3 - "$T/good/results.json" <<'PY' || fail "the writers' facts did not reach the check"
import json, sys
r = json.load(open(sys.argv[1]))
marks = {s["last_mark"] for s in r["states"] if s["last_mark"]}
assert any(m.startswith("fact file w/d") for m in marks), marks
assert r["verdicts"]["failing"] == 0 and r["verdicts"]["checked"] > 200, r["verdicts"]
PY

cat >"$T/liar.sh" <<'EOF2'
#!/bin/sh
# Writes a file and says it is durable without the fsync; in the working
# directory nvj crash run gives it, which must be $NVJ_MNT.
set -e
[ "$(pwd)" = "$NVJ_MNT" ] || { echo "not in NVJ_MNT: $(pwd)"; exit 3; }
printf 'hello' >said-so
"$NVJ" mark fact file said-so size 5 crc32c 9a71bb4c
EOF2
chmod +x "$T/liar.sh"
export NVJ
run_crash "$T/liar.log" run --out "$T/liar" --verify failing -- "$T/liar.sh"
[ "$STATUS" = 1 ] || fail "nvj crash run of a lying workload exited $STATUS, not 1"
grep -q "said-so: expected 5 bytes, crc32c 9a71bb4c, found missing" "$T/liar.log" || fail "the broken fact is not named"
tail -n 1 "$T/liar.log" | grep -Eq ' [1-9][0-9]* failing$' || fail "no failing state counted"
expect_files "$T/liar" table.md states.dat states.png states.svg || fail "the report is not complete"
python3 - "$T/liar" <<'PY' || fail "the report does not say what results.json says"
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/results.json"))
table = open(f"{d}/table.md").read()
failing = [s for s in r["states"] if s["verdict"] != "pass"]
assert failing and f"**{r['verdicts']['failing']} failing.**" in table, r["verdicts"]
rows = [l for l in table.splitlines() if "| said-so: " in l]
assert len(rows) == min(len(failing), 50), (len(rows), len(failing))
assert any("said-so: expected 5 bytes, crc32c 9a71bb4c, found missing" in l for l in rows), "no detailed row"
assert any(f"| {g['signature']} | {g['states']} |" in table for g in r["signatures"]), "the signatures are not listed"
dat = [l.split() for l in open(f"{d}/states.dat") if not l.startswith("#")]
points = {s["point"] for s in r["states"]}
assert [int(x[0]) for x in dat] == sorted(points), "states.dat: not one row per crash point"
assert sum(int(x[3]) for x in dat) == len(failing), "states.dat: the failing states do not add up"
assert open(f"{d}/states.svg").read().lstrip().startswith("<?xml"), "states.svg is no SVG"
assert open(f"{d}/states.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n", "states.png is no PNG"
PY
"$NVJ" crash report "$T/liar/results.json" --out "$T/again" >"$T/report.log" || fail "nvj crash report failed"
cmp "$T/liar/table.md" "$T/again/table.md" || fail "nvj crash report wrote another table.md"
status=0
"$NVJ" crash check "$T/liar/recording.nvjrec" --shard 0/2 --verify none --out "$T/shard0" >/dev/null || status=$?
[ "$status" -le 1 ] || fail "the shard's check exited $status"
[ -s "$T/shard0/results.json" ] || fail "the shard wrote no results.json"
[ ! -e "$T/shard0/table.md" ] || fail "a shard wrote a report of its part alone"
python3 - "$T/liar/results.json" <<'PY' || fail "the liar's final state does not hold its fact"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["final_state"]["verdict"] == "pass", r["final_state"]
PY
# A fact false even where every write landed: the final state breaks it,
# which says the facts are wrong, not the crash states.
cat >"$T/wrong.sh" <<'EOF2'
#!/bin/sh
set -e
printf 'hello' >f
sync
"$NVJ" mark fact file f size 5 crc32c 00000000
EOF2
chmod +x "$T/wrong.sh"
run_crash "$T/wrong.log" run --out "$T/wrong" --verify none -- "$T/wrong.sh"
[ "$STATUS" = 1 ] || fail "a wrong fact: exit $STATUS, not 1"
grep -q "^the final state (every write kept, as a clean unmount leaves it) is fail: the facts are wrong" "$T/wrong.log" ||
  fail "the final state's broken fact is not said"
grep -q "^  f: expected 5 bytes, crc32c 00000000, found 5 bytes, crc32c 9a71bb4c" "$T/wrong.log" || fail "the wrong fact is not named"
python3 - "$T/wrong/results.json" <<'PY' || fail "results.json does not carry the final state's verdict"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["final_state"]["verdict"] == "fail" and r["final_state"]["violations"][0]["path"] == "f", r["final_state"]
PY
status=0
"$NVJ" crash report "$T/shard0" >"$T/e4" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "nvj crash merge" "$T/e4" || fail "a shard's report: exit $status, $(cat "$T/e4")"

# The known bug's workload, on this host's kernel: nothing is lost, torn
# writes too (at 4 KiB and at 512 bytes), the kernel agreeing on each state.
run_crash "$T/overwrite.log" run --out "$T/overwrite" --verify all --torn 3 --torn-unit 4K -- \
  "$NVJ" writers --tasks 4 --dirs 2 --chunks 4 --chunk-size 16K --rounds 2 --overwrite --fsync each w
[ "$STATUS" = 0 ] || fail "nvj writers --overwrite --fsync each on this host's kernel: exit $STATUS, not 0"
python3 - "$T/overwrite/results.json" <<'PY' || fail "the rewrites' facts were not checked"
import json, sys
r = json.load(open(sys.argv[1]))
after = [s for s in r["states"] if (s["last_mark"] or "").startswith(("fact prefix w/", "fact file w/"))]
assert len(after) > 50 and r["verdicts"]["failing"] == 0, (len(after), r["verdicts"])
torn = [s for s in r["states"] if s["strategy"] == "torn"]
assert len(torn) > 20, f"only {len(torn)} torn states"
for s in torn:
    t = s["torn"]
    assert 0 < t["kept_bytes"] < t["length"] and (t["offset"] + t["kept_bytes"]) % 4096 == 0, t
assert all(s["ground_truth"]["verdict"] == "pass" and s["agree"] for s in r["states"])
print(f"{len(r['states'])} states, {len(torn)} torn, none fail by either check")
PY
status=0
"$NVJ" crash check "$T/overwrite/recording.nvjrec" --torn 2 --torn-unit 512 --verify none >"$T/torn512.log" || status=$?
[ "$status" = 0 ] || { grep -A8 -E "^(fail|unreadable|needs_fsck): state|signatures of failing" "$T/torn512.log" | head -40; fail "torn at 512 bytes: exit $status"; }
grep -Eq '^torn +[1-9][0-9]* +[1-9][0-9]*$' "$T/torn512.log" || fail "no torn states at 512 bytes"
# A tear that alone breaks a fact: a file's blocks written and fsynced,
# then overwritten in place by one O_DIRECT write (no metadata changes) and
# said durable without the flush. Kept whole, the write holds the fact;
# torn, it does not, and the cause names the tear, in the file's data. The
# data disk is an SSD: the recording carries its atomic unit (4 KiB), and
# the tears fall on it.
head -c 65536 /dev/urandom >"$T/new.bin"
cat >"$T/tear.sh" <<EOF2
#!/bin/sh
set -e
dd if=/dev/zero of=f bs=65536 count=1 conv=fsync status=none
sync
dd if="$T/new.bin" of=f bs=65536 count=1 oflag=direct conv=notrunc status=none
"\$NVJ" mark fact file f size 65536 crc32c $(crc32c "$T/new.bin")
EOF2
chmod +x "$T/tear.sh"
# Within three tries: on a loaded machine a commit of the kernel's own can
# flush the data disk before the mark, leaving no state that loses the write.
for try in 1 2 3; do
  rm -rf "$T/tear"
  run_crash "$T/tear.log" run --out "$T/tear" --verify failing --torn 2 data-model=ssd -- "$T/tear.sh"
  [ "$STATUS" != 1 ] || break
  echo "(try $try: exit $STATUS)"
done
[ "$STATUS" = 1 ] || fail "a fact broken by a tear: exit $STATUS in three tries, not 1"
python3 - "$T/tear/results.json" <<'PY' || fail "the tear is not named as the cause"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["recording"]["atomic_units"] == {"data": 4096, "journal": 512}, r["recording"]
assert r["options"]["torn_unit"] == 0, r["options"]
after = [s for s in r["states"] if s["last_mark"]]
assert any(s["strategy"] == "all" and s["verdict"] == "pass" for s in after), "kept whole, the write should hold the fact"
assert all((s["torn"]["offset"] + s["torn"]["kept_bytes"]) % 4096 == 0 for s in after if s["strategy"] == "torn"), "a tear off the SSD's 4 KiB"
torn = [s for s in after if s["strategy"] == "torn" and s["verdict"] == "fail" and "cause" in s]
alone = [s for s in torn if s["cause"]["found"] and not s["cause"]["dropped"]]
assert alone, "no state whose tear alone breaks the fact"
for s in alone:
    assert s["cause"]["torn"] == "data" and s["cause"]["ground_truth"] == "fail", s["cause"]
    assert 0 < s["torn"]["kept_bytes"] < s["torn"]["length"] and s["ground_truth"]["verdict"] == "fail", s
print(f"{len(alone)} torn states whose tear alone breaks the fact, the kernel agreeing")
PY

status=0
"$NVJ" crash check "$T/overwrite/recording.nvjrec" --torn 2 --torn-unit 1000 >"$T/e5" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "whole 512-byte sectors" "$T/e5" || fail "--torn-unit 1000: exit $status, $(cat "$T/e5")"

status=0
"$NVJ" crash run >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "which workload" "$T/e1" || fail "no workload: exit $status, $(cat "$T/e1")"
status=0
"$NVJ" crash run data -- true >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "'data' is no PARAM=VALUE" "$T/e2" || fail "a bad parameter: exit $status, $(cat "$T/e2")"
status=0
"$NVJ" crash report >"$T/e6" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "which RESULTS" "$T/e6" || fail "nvj crash report without RESULTS: exit $status, $(cat "$T/e6")"
status=0
"$NVJ" crash report "$T/no-such/results.json" >"$T/e7" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "no-such/results.json: cannot be read" "$T/e7" || fail "nvj crash report of a missing file: exit $status, $(cat "$T/e7")"
status=0
"$NVJ" crash check "$T/good/recording.nvjrec" --torn 5000 >"$T/e8" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q -- "--torn=5000: expected a whole number" "$T/e8" || fail "--torn 5000: exit $status, $(cat "$T/e8")"
status=0
"$NVJ" crash run --out "$T/good" -- true >"$T/e3" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "recording.nvjrec exists" "$T/e3" || fail "an --out in use: exit $status, $(cat "$T/e3")"
echo "PASS"
