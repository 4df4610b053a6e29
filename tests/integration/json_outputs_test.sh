#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The JSON the tools print, from the real programs, against the schemas in
# docs/schemas and read back: nvj-workload synctest and writers --json (a
# run, a run that fails, --verify with and without losses), nvj journal
# inspect --json (images from nvj mkfs, and a journal with transactions
# written by debugfs), nvj bench --json against the plugin in nbdkit.
#
# Needs NVJ, NVJ_WORKLOAD, NVJ_PLUGIN (ctest sets them), python3 with
# jsonschema, nbdkit, mke2fs and debugfs; no root.
source "$(dirname "$0")/lib.sh"
: "${NVJ_WORKLOAD:?NVJ_WORKLOAD must name the nvj-workload binary}"
# Debian's interpreter, which python3-jsonschema serves (the validator's
# first line names it too).
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || skip "/usr/bin/python3 has no jsonschema module (Debian: python3-jsonschema)"
for c in nbdkit mke2fs debugfs; do
  command -v "$c" >/dev/null || skip "$c is not installed"
done
fail() { echo "FAIL: $*"; exit 1; }

# check FILE EXPR... : every Python EXPR holds over j, FILE's document.
check() {
  python3 - "$@" <<'PY' || fail "$1: see above"
import json, sys
j = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    if not eval(e):
        sys.exit(f"{sys.argv[1]}: not {e}\n{json.dumps(j)[:3000]}")
PY
}

# exits CODE COMMAND... : COMMAND exits with CODE (its standard error in $T/err).
exits() {
  local code=$1 status=0; shift
  "$@" 2>"$T/err" || status=$?
  [ "$status" = "$code" ] || { cat "$T/err"; fail "$*: exit $status, expected $code"; }
}

echo "== synctest --json"
exits 0 "$NVJ_WORKLOAD" synctest "$T/st" --processes 4 --per-dir 2 --passes 6 --unlink-lag 2 --fsync-file --fsync-dir \
  --json >"$T/synctest.json"
valid_json synctest.schema.json "$T/synctest.json"
# Per pass: create, write, fsync, a directory fsync after the close, three
# renames each with a directory fsync; then an unlink per pass after the lag.
check "$T/synctest.json" 'j["files"] == 24' 'j["operations"] == 24 * 10 + 4 * (6 - 2)' 'j["failure"] is None' \
  'j["fsync_file"]["count"] == 24' 'j["fsync_directory"]["count"] == 24 * 4' \
  'j["bytes"] >= 24 * 5 * 1024 and j["bytes"] <= 24 * 250 * 1024' \
  'all(0 < s["p50_us"] <= s["p90_us"] <= s["p99_us"] <= s["max_us"] for s in (j["fsync_file"], j["fsync_directory"]))' \
  'j["seconds"] > 0 and j["files_per_second"] > 0'

echo "== writers --json"
w=(--tasks 12 --chunks 4 --dirs 3 --rounds 2 --fsync end)
exits 0 "$NVJ_WORKLOAD" writers "$T/w" "${w[@]}" --json >"$T/writers.json"
check "$T/writers.json" 'j["rounds_done"] == 2' 'j["bytes"] == 2 * 12 * 4 * 1024' 'j["failure"] is None' \
  '"failure_errno" not in j' '0 < j["fill"] <= 1'
# A task whose file is a directory fails: the run ends naming it and the errno.
mkdir -p "$T/wf/d0/t3"
exits 1 "$NVJ_WORKLOAD" writers "$T/wf" --tasks 6 --chunks 2 --dirs 3 --json >"$T/writers-failed.json"
check "$T/writers-failed.json" 'j["failure"].startswith("task 3: create d0/t3: Is a directory")' \
  'j["failure_errno"] == "EISDIR"' 'j["rounds_done"] == 0'
valid_json writers.schema.json "$T/writers.json" "$T/writers-failed.json"

echo "== writers --verify --json"
exits 0 "$NVJ_WORKLOAD" writers "$T/w" "${w[@]}" --verify --json >"$T/verify.json"
check "$T/verify.json" 'j["tasks"] == 12 and j["chunks"] == 4 and j["round"] == 1' 'j["tasks_with_losses"] == 0' \
  'j["losses"] == []'
truncate -s 2K "$T/w/d1/t4"
exits 1 "$NVJ_WORKLOAD" writers "$T/w" "${w[@]}" --verify --json >"$T/verify-lost.json"
check "$T/verify-lost.json" 'j["tasks_with_losses"] == 1' \
  'j["losses"] == ["d1/t4: acknowledged chunk 2 of round 1 is missing"]'
# Checked as if one round was written: every task lost its chunks; the
# first 10 are listed.
exits 1 "$NVJ_WORKLOAD" writers "$T/w" --tasks 12 --chunks 4 --dirs 3 --rounds 1 --fsync end --verify --json >"$T/verify-all.json"
check "$T/verify-all.json" 'j["round"] == 0' 'j["tasks_with_losses"] == 12' 'len(j["losses"]) == 10' \
  'j["losses"][0] == "d0/t0: acknowledged chunk 0 of round 0 differs"'
valid_json writers-verify.schema.json "$T/verify.json" "$T/verify-lost.json" "$T/verify-all.json"

echo "== journal inspect --json"
exits 0 "$NVJ" mkfs "$T/int.img" --size 64M --journal internal:4M >/dev/null
exits 0 "$NVJ" journal inspect "$T/int.img" --json >"$T/int.json"
check "$T/int.json" 'j["placement"] == "internal"' 'j["block_size"] == 1024' 'j["maxlen"] == 4096' \
  'not j["needs_recovery"]' 'j["transactions"] == [] and j["replayed_transactions"] == 0' \
  'j["error"] == 0 and j["failed_commit"] is None'
exits 0 "$NVJ" mkfs "$T/ext.img" --size 64M --block-size 4096 --journal "external:$T/ext.jnl:8M" >/dev/null
exits 0 "$NVJ" journal inspect "$T/ext.img" --journal "$T/ext.jnl" --json >"$T/ext.json"
exits 0 "$NVJ" journal inspect "$T/ext.jnl" --json >"$T/dev.json"
check "$T/ext.json" 'j["placement"] == "external"' 'j["block_size"] == 4096' 'j["maxlen"] == 2048' \
  'j["users"] == 1'
check "$T/dev.json" 'j["placement"] == "journal device"' \
  "j['uuid'] == $(python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["uuid"]))' "$T/ext.json")"
# Two transactions written into the log by debugfs: two blocks logged, then
# a revoke of one of them.
truncate -s 64M "$T/tx.img"
mke2fs -q -F -t ext4 -b 1024 -J size=4 "$T/tx.img"
head -c 2048 /dev/urandom >"$T/block"  # one 1 KiB block per logged block
printf 'jo\njw -b 300,301 %s\njw -r 300\njc\n' "$T/block" >"$T/debugfs.cmd"
debugfs -w -f "$T/debugfs.cmd" "$T/tx.img" >/dev/null 2>&1 || fail "debugfs could not write the journal"
exits 0 "$NVJ" journal inspect "$T/tx.img" --json >"$T/tx.json"
check "$T/tx.json" 'j["needs_recovery"] and j["error"] == 0' 'j["replayed_transactions"] == 2' \
  'j["end_tid"] - j["start_tid"] == 2' 'len(j["transactions"]) == 2' \
  'j["transactions"][0]["logged_blocks"] == 2 and j["transactions"][0]["revoke_blocks"] == 0' \
  'j["transactions"][1]["revoke_blocks"] == 1 and j["transactions"][1]["revoked_blocks"] == 1' \
  'all(t["replayed"] and isinstance(t["commit_log_block"], int) for t in j["transactions"])' \
  '"revoke" in j["features"].split()'
valid_json journal-inspect.schema.json "$T/int.json" "$T/ext.json" "$T/dev.json" "$T/tx.json"

echo "== bench --json"
start_server bench data=64M data-model=none journal-model=none
uri="nbd+unix:///journal?socket=$T/bench.sock"
exits 0 "$NVJ" bench --json --duration 1 --depth 4 --write-percent 50 --block-size 8K "$uri" >"$T/bench.json"
exits 0 "$NVJ" bench --json --duration 1 --pattern sequential --block-size 64K --span 1M "$uri" >"$T/bench-seq.json"
# What the exports tell their clients: no FUA on the write-through NVRAM
# journal, no request smaller than a 512-byte sector.
start_server bench2 data=64M
exits 2 "$NVJ" bench --duration 1 --fua "nbd+unix:///journal?socket=$T/bench2.sock"
grep -q -- "--fua: the export offers no FUA" "$T/err" || fail "bench --fua to the NVRAM journal: $(cat "$T/err")"
exits 2 "$NVJ" bench --duration 1 --block-size 1000 "nbd+unix:///data?socket=$T/bench2.sock"
grep -q -- "--block-size and --offset must be whole 512-byte sectors" "$T/err" || fail "bench --block-size 1000: $(cat "$T/err")"
stop_server "$SERVER_PID"
stop_server "${_servers[0]}"
_servers=()
check "$T/bench.json" "j['uri'] == '$uri'" 'j["depth"] == 4 and j["block_size"] == 8192' \
  'j["write_percent"] == 50 and j["pattern"] == "random"' 'j["requests"] > 0 and j["iops"] > 0' \
  '0 < j["latency_us"]["p50"] <= j["latency_us"]["p99"] <= j["latency_us"]["max"]'
check "$T/bench-seq.json" 'j["block_size"] == 65536 and j["write_percent"] == 100 and j["pattern"] == "sequential"'
valid_json bench.schema.json "$T/bench.json" "$T/bench-seq.json"
echo "PASS"
