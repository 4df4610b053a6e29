#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj experiment morton2001 --quick, the README's main job, end to end: the
# 4 journal placements x 2 rows of synctest on the kernel's ext4 through the
# server, each filesystem e2fsck-clean afterwards; results.json, table.md
# and the plots (PNG and SVG) written; the effects the seed reports present
# in the figures (the NVRAM journal beats the internal one on the disk); the
# disk caches' destaging charged to journal and home blocks; no
# leftovers. SIGTERM mid-run stops it at once and tears down. Bad input is
# refused before anything starts. Also the workload
# generators' usage errors.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

out="$T/out"
run_experiment morton2001 --quick --out "$out"
expect_files "$out" results.json table.md completion.png completion.svg device_time.png device_time.svg
valid_json morton2001.results.schema.json "$out/results.json"
grep -q '^| processes/dir | directories | internal, hdd | external, nvram | external, hdd | internal 4M, hdd |$' "$T/log"
python3 - "$out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"]
assert len(runs) == 8, len(runs)
for x in runs:
    assert x["fsck_clean"], x
    assert x["synctest"]["failure"] is None, x
    assert x["synctest"]["files"] == 20 * 15, x
    assert x["transactions"] > 0, x
    d = x["device_time_s"]
    assert d["journal"] > 0, x
    # Every commit's flush destages the data disk's cache: home blocks in
    # every run, journal blocks where the journal is on a disk with a cache.
    assert d["home_destage"] > 0, x
    if x["config"] == "external-nvram":
        assert d["journal_destage"] == 0, x
    else:
        assert d["journal_destage"] > 0, x
time = {(x["config"], x["processes_per_dir"]): x["synctest"]["seconds"] for x in runs}
# The NVRAM journal is faster than the internal journal on the disk model in both rows.
for per in (10, 1):
    assert time[("external-nvram", per)] < time[("internal-hdd", per)], time
print("results.json: 8 runs, clean, NVRAM ahead of the internal journal")
PY
head -c 4 "$out/completion.png" | grep -q PNG
grep -q '<svg' "$out/completion.svg"

# SIGTERM while synctest runs: the tasks stop at once, everything is torn
# down, exit 1 naming why. Another process keeps the mount busy for 3 s
# after the signal: the unmount waits for it instead of leaving the
# filesystem and its loop device behind.
"$NVJ" experiment morton2001 --quick --out "$T/stopped" >"$T/slog" 2>&1 &
pid=$!
_servers+=("$pid")
mnt=
for _ in $(seq 300); do
  mnt=$(awk -v p="/run/nvjournal/experiment-$pid/" 'index($5, p) == 1 && $5 ~ /\/mnt$/ {print $5; exit}' /proc/self/mountinfo)
  [ -n "$mnt" ] && break
  sleep 0.1
done
[ -n "$mnt" ] || { cat "$T/slog"; fail "nvj experiment never mounted a filesystem"; }
# synctest is under way once it has written a file into its spool.
for _ in $(seq 600); do
  [ -z "$(find "$mnt/spool" -type f -print -quit 2>/dev/null)" ] || break
  kill -0 "$pid" 2>/dev/null || { cat "$T/slog"; fail "nvj experiment ended before synctest wrote a file"; }
  sleep 0.1
done
[ -n "$(find "$mnt/spool" -type f -print -quit 2>/dev/null)" ] || fail "synctest wrote no file in $mnt/spool in 60 s"
(cd "$mnt" && exec sleep 3) &
holder=$!
_servers+=("$holder")
# The holder keeps the mount busy once its working directory is in it.
for _ in $(seq 100); do
  [ "$(readlink "/proc/$holder/cwd" 2>/dev/null)" != "$mnt" ] || break
  sleep 0.01
done
[ "$(readlink "/proc/$holder/cwd" 2>/dev/null)" = "$mnt" ] || fail "the holder never entered $mnt"
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "still running 10 s after SIGTERM"; exit 1; fi
status=0; wait "$pid" || status=$?
_servers=()
[ "$status" = 1 ] || { echo "exit $status after SIGTERM"; cat "$T/slog"; exit 1; }
grep -q "stopped by a signal" "$T/slog" || { cat "$T/slog"; exit 1; }
experiment_leftovers "$pid"

# Bad input: usage errors (exit 2) naming what is wrong, nothing started.
expect_usage() {  # expect_usage PATTERN ARGS...
  local pattern=$1 status=0; shift
  "$NVJ" "$@" >/dev/null 2>"$T/err" || status=$?
  [ "$status" = 2 ] || { echo "nvj $*: exit $status, expected 2"; cat "$T/err"; exit 1; }
  grep -q -- "$pattern" "$T/err" || { echo "nvj $*: no '$pattern' in:"; cat "$T/err"; exit 1; }
}
expect_usage "unknown experiment 'nosuch'" experiment nosuch
expect_usage "which one" experiment
expect_usage "unknown option '--bogus'" experiment morton2001 --bogus
expect_usage "wheeler2007: unknown option '--passes'" experiment wheeler2007 --passes 3
expect_usage "--passes" experiment morton2001 --passes 0
expect_usage "no directory given" synctest
expect_usage "--per-dir must be between 1 and --processes (4): give --per-dir 4 or fewer, or --processes 5 or more" \
  synctest "$T/st" --processes 4 --per-dir 5
expect_usage "--mean-size=x" synctest "$T/st" --mean-size x
expect_usage "--fsync=often: expected none, each or end" writers "$T/w" --fsync often
expect_usage "--dirs must be between 1 and --tasks" writers "$T/w" --tasks 2 --dirs 3
echo data > "$T/file"
status=0; "$NVJ" experiment morton2001 --quick --out "$T/file" 2>"$T/err" || status=$?
[ "$status" = 1 ] || fail "--out naming a file: exit $status, expected 1"
grep -q "exists and is not a folder" "$T/err" || fail "--out naming a file: no 'exists and is not a folder' in: $(cat "$T/err")"
[ "$(cat "$T/file")" = data ] || fail "--out naming a file changed the file"

# The writers' first error ends the run naming the task and the errno.
mkdir "$T/small"
mount -t tmpfs -o size=1m nvj-writers "$T/small"
_mounts+=("$T/small")
status=0
"$NVJ" writers "$T/small/w" --tasks 20 --chunks 200 --dirs 2 >"$T/wout" 2>"$T/err" || status=$?
umount "$T/small"
[ "$status" = 1 ] || { echo "writers on a full tmpfs: exit $status"; exit 1; }
grep -Eq '^nvj writers: task [0-9]+: write of chunk [0-9]+ to d[01]/t[0-9]+: No space left on device \(ENOSPC\)$' "$T/err"
grep -q 'fill        100.0%' "$T/wout"
echo "PASS"
