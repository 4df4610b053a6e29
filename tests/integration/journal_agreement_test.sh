#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The live journal decoder agrees with the kernel. Over one mount session the
# host kernel's ext4 writes through nbdfuse + loop; the server decodes the
# journal from the writes it receives. Compared with the kernel's own
# figures for the same journal: /proc/fs/jbd2/<dev>/info (transactions,
# read before unmounting) and, where tracefs is available, the exact
# per-transaction jbd2_run_stats events (blocks and log blocks, unmount
# included). Done for an external journal under data=ordered and for an
# internal journal under data=journal, with a directory deleted so that
# (under data=ordered) revoke records appear. GET /journal, GET /stats and
# the trace file are checked against their JSON Schemas.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v curl >/dev/null || skip "curl is not installed"

TRACEFS=/sys/kernel/tracing
_tracefs_mounted=0
_instance=""
stop_tracing() {
  if [ -n "$_instance" ] && [ -d "$_instance" ]; then
    echo 0 >"$_instance/events/enable"
    rmdir "$_instance"
  fi
  _instance=""
  if [ "$_tracefs_mounted" = 1 ]; then
    umount "$TRACEFS"
    _tracefs_mounted=0
  fi
}
trap 'status=$?; set +e; stop_tracing; (exit "$status"); cleanup' EXIT

# start_tracing DEV : jbd2_run_stats of the filesystem on DEV, in a private
# instance; returns 1 when tracefs is not available.
start_tracing() {
  if ! mountpoint -q "$TRACEFS"; then
    mount -t tracefs nodev "$TRACEFS" 2>/dev/null || return 1
    _tracefs_mounted=1
  fi
  [ -d "$TRACEFS/events/jbd2" ] || return 1
  _instance="$TRACEFS/instances/nvj-agreement-$$"
  mkdir "$_instance"
  local dev=$(( ($(stat -c %t "$1" | sed 's/^/0x/') << 20) | $(stat -c %T "$1" | sed 's/^/0x/') ))
  echo 8192 >"$_instance/buffer_size_kb"
  echo "dev == $dev" >"$_instance/events/jbd2/jbd2_run_stats/filter"
  echo 1 >"$_instance/events/jbd2/jbd2_run_stats/enable"
}

# run_case NAME MOUNT_OPTS SERVER_PARAMS...
run_case() {
  local name=$1 opts=$2; shift 2
  echo "== $name"
  start_server "$name" data=512M "control=$T/$name.ctl" "trace-file=$T/$name.trace" "$@"
  attach "$name" "$T/$name.sock"
  local traced=0
  start_tracing "$DATA_DEV" && traced=1
  mkdir -p "$T/mnt"
  mount -t ext4 -o "$opts${JOURNAL_DEV:+,journal_path=$JOURNAL_DEV}" "$DATA_DEV" "$T/mnt"
  _mounts+=("$T/mnt")
  fs_mark -d "$T/mnt/a" -s 10240 -n 400 -t 2 -S 1 -k -l "$T/fs_mark.log" >/dev/null
  rm -rf "$T/mnt/a"
  fs_mark -d "$T/mnt/b" -s 4096 -n 200 -t 1 -S 1 -k -l "$T/fs_mark.log" >/dev/null
  sync
  local info
  info=/proc/fs/jbd2/$(basename "$DATA_DEV")-8/info
  [ -z "$JOURNAL_DEV" ] || info=/proc/fs/jbd2/$(basename "$JOURNAL_DEV")/info
  cat "$info" >"$T/$name.info"
  curl -sf --unix-socket "$T/$name.ctl" http://lab/journal >"$T/$name.before.json"
  umount "$T/mnt"
  if [ "$traced" = 1 ]; then
    echo 0 >"$_instance/tracing_on"
    cat "$_instance/trace" >"$T/$name.events"
  fi
  stop_tracing
  detach "$name"
  curl -sf --unix-socket "$T/$name.ctl" http://lab/journal >"$T/$name.after.json"
  curl -sf --unix-socket "$T/$name.ctl" http://lab/metrics >"$T/$name.metrics"
  curl -sf --unix-socket "$T/$name.ctl" http://lab/stats >"$T/$name.stats.json"
  # The server's JSON, as the kernel's work left it, against the published schemas.
  check_json journal "$T/$name.before.json" "$T/$name.after.json"
  check_json --lines journal-trace-line "$T/$name.trace"
  check_json stats "$T/$name.stats.json"
  python3 - "$T/$name" "$traced" "$opts" <<'PY'
import json, re, sys
base, traced, opts = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
info = open(base + ".info").read()
m = re.match(r"(\d+) transactions \((\d+) requested\), each up to (\d+) blocks", info)
kernel_tx = int(m.group(1))
avg_logged = int(re.search(r"(\d+) logged blocks per transaction", info).group(1))
before = json.load(open(base + ".before.json"))
after = json.load(open(base + ".after.json"))
for key in ("committed_transactions", "logged_blocks", "revoked_blocks", "commit_latency_us", "fill_ratio", "traffic"):
    assert key in after, key
assert before["problems"] == 0 and after["problems"] == 0, after["recent_problems"]
assert after["checksum_errors"] == 0
print(f"kernel: {kernel_tx} transactions, {avg_logged} log blocks each on average; "
      f"server: {before['committed_transactions']} transactions, {before['log_blocks_written']} log blocks "
      f"before unmounting, {after['committed_transactions']} after")
assert before["committed_transactions"] == kernel_tx, (before["committed_transactions"], kernel_tx)
assert before["log_blocks_written"] // kernel_tx == avg_logged, (before["log_blocks_written"], avg_logged)
if traced:
    runs = [l for l in open(base + ".events") if "jbd2_run_stats" in l]
    blocks = sum(int(re.search(r" blocks (\d+)", l).group(1)) for l in runs)
    logged = sum(int(re.search(r"blocks_logged (\d+)", l).group(1)) for l in runs)
    print(f"tracepoint: {len(runs)} transactions, {blocks} blocks, {logged} log blocks; "
          f"server: {after['committed_transactions']}, {after['logged_blocks']}, {after['log_blocks_written']}")
    assert after["committed_transactions"] == len(runs)
    assert after["logged_blocks"] == blocks
    assert after["log_blocks_written"] == logged
else:
    print("tracefs is not available: exact block totals not compared")
# A deleted directory's blocks are metadata: revoked (data=journal never
# revokes: ext4_forget() leaves that to the checkpoint).
print("revoked:", after["revoked_blocks"], "in", after["revoke_blocks"], "revoke blocks")
assert after["revoked_blocks"] > 0 or "data=journal" in opts, "deleting a directory should revoke its blocks"
t = after["traffic"]
assert t["checkpoint"]["bytes"] > 0, t  # unmounting writes every logged block home
if "data=ordered" in opts:
    assert t["ordered"]["bytes"] > 0, t
lat = after["commit_latency_us"]
assert 0 < lat["p50"] <= lat["p99"] <= lat["max"], lat
lines = open(base + ".trace").read().splitlines()
assert len(lines) == after["committed_transactions"], (len(lines), after["committed_transactions"])
assert json.loads(lines[-1])["tid"] == after["recent"][-1]["tid"]
metrics = open(base + ".metrics").read()
assert f"nvjournal_journal_transactions_total {after['committed_transactions']}" in metrics
# The commit time histogram counts the kernel's commits, every one under +Inf.
commits = after["commit_latency_us"]["count"]
assert commits > 0 and f"nvjournal_journal_commit_seconds_count {commits}\n" in metrics, commits
assert f'nvjournal_journal_commit_seconds_bucket{{le="+Inf"}} {commits}\n' in metrics, commits
print("traffic:", {k: v["bytes"] for k, v in t.items()})
PY
  stop_server "$SERVER_PID"
}

run_case external data=ordered journal=64M
run_case internal data=journal fs-journal=internal:32M
echo "PASS"
