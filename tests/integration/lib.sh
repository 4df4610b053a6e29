# SPDX-License-Identifier: BSD-3-Clause
# Shared by the kernel tests: a scratch folder, servers, attachments and
# mounts that are all taken down on exit, whatever happened.
#
# Needs NVJ (the nvj binary) and NVJ_PLUGIN (the plugin) in the environment;
# ctest sets both. With NVJ_TEST_KEEP=DIR, a test that fails leaves its
# scratch folder (recordings, explore.json, the servers' logs) in DIR,
# named after the test and its PID, rather than removing it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/nbdkit.sh"

: "${NVJ:?NVJ must name the nvj binary}"
: "${NVJ_PLUGIN:?NVJ_PLUGIN must name the plugin}"

T=$(mktemp -d /tmp/nvj-kernel-XXXXXX)
# The crash lab's scratch ($TMPDIR where set: tools/nvj/host/files/
# scratch_parent.h) is this test's own, so that what it leaves is told apart
# from what a test running beside it has out: in /dev/shm, as nvj puts it
# when TMPDIR is not set, where that is a tmpfs with 2 GiB free.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
   [ $(($(stat -f -c %a /dev/shm) * $(stat -f -c %S /dev/shm))) -ge $((2 << 30)) ]; then
  TMPDIR=$(mktemp -d /dev/shm/nvj-kernel-XXXXXX)
else
  TMPDIR=$T/tmp
  mkdir "$TMPDIR"
fi
export TMPDIR
_mounts=()
_attachments=()
_servers=()

# skip WHY: the test cannot run here (ctest reports it as skipped: exit 77).
# fail WHAT: the test failed; the message says what was expected.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

_source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# check_json [--lines] SCHEMA FILE... : every FILE (with --lines: every line
# of it) valid against docs/schemas/SCHEMA.schema.json, or against the schema
# file SCHEMA when it is a path; fails naming the file, the JSON path and the
# rule broken (tests/support/validate_json.py).
check_json() {
  local lines=()
  if [ "$1" = --lines ]; then lines=(--lines); shift; fi
  local schema=$1; shift
  case "$schema" in
    */*) ;;
    *) schema="$_source_dir/docs/schemas/$schema.schema.json" ;;
  esac
  "$_source_dir/tests/support/validate_json.py" "${lines[@]}" "$schema" "$@"
}

# require_guest: what nvj vm boots a guest with: QEMU, a kernel in /boot and
# a static busybox (the guest has no C library). Skips naming what is missing.
require_guest() {
  command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (qemu-system-x86)"
  ls /boot/vmlinuz-* >/dev/null 2>&1 || skip "no kernel in /boot (linux-image-amd64)"
  busybox=$(command -v busybox) || skip "busybox is not installed (busybox-static)"
  if LC_ALL=C readelf -l "$busybox" 2>/dev/null | grep -q 'program interpreter'; then
    skip "$busybox is linked dynamically: the guest needs busybox-static"
  fi
}

# fetch_kernel NAME FILE: nvj kernel fetch --json NAME into FILE (its
# progress on stderr); skips the test when Debian's archive cannot be
# reached and the cache has no such kernel, fails on any other error.
fetch_kernel() {
  local status=0
  "$NVJ" kernel fetch --json "$1" >"$2" 2>"$2.err" || status=$?
  cat "$2.err" >&2
  if [ "$status" = 2 ] && grep -q "cannot be reached" "$2.err"; then
    skip "Debian's archive cannot be reached and the cache has no $1 kernel: $(tail -n 1 "$2.err")"
  fi
  [ "$status" = 0 ] || fail "nvj kernel fetch $1 exited $status"
}

# remember_vm_run LOG: the PIDs (nbdkit, QEMU) and run folders an nvj vm -v
# run's LOG names; expect_vm_runs_gone MIN: at least MIN PIDs were named,
# none of them is still running, none of the folders is left. Only this
# test's own: other tests may be booting guests beside it.
VM_PIDS=()
VM_FOLDERS=()
remember_vm_run() {
  VM_PIDS+=($(sed -nE 's/.*started \(pid ([0-9]+)\).*/\1/p' "$1"))
  VM_FOLDERS+=($(grep -oE '/(run|tmp)/nvjournal[^/ ]*/vm-[0-9]+' "$1" | sort -u))
}
expect_vm_runs_gone() {
  local pid f
  [ "${#VM_PIDS[@]}" -ge "$1" ] || fail "only ${#VM_PIDS[@]} PIDs reported"
  for pid in "${VM_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null && grep -Eq 'qemu|nbdkit' "/proc/$pid/cmdline" 2>/dev/null; then
      fail "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) is still running"
    fi
  done
  [ "${#VM_FOLDERS[@]}" -ge 1 ] || fail "no run folder named in the output"
  for f in "${VM_FOLDERS[@]}"; do [ ! -e "$f" ] || fail "a run folder is left: $f"; done
}

# require_static_workload: the NVJ_WORKLOAD a guest runs (when one is given)
# is the static build, not a sanitized one.
require_static_workload() {
  if [ -n "${NVJ_WORKLOAD:-}" ] && LC_ALL=C readelf -l "$NVJ_WORKLOAD" 2>/dev/null | grep -q 'program interpreter'; then
    skip "$NVJ_WORKLOAD is linked dynamically (a sanitized build): the guest needs the static one"
  fi
}

# require_filesystems NAME...: this host's kernel mounts each (built in, or
# its module loaded now); skips naming the first it lacks. A kernel build
# may leave any of them out: the test says so rather than fail.
require_filesystems() {
  local fs
  for fs in "$@"; do
    grep -qw "$fs" /proc/filesystems || modprobe "$fs" 2>/dev/null || grep -qw "$fs" /proc/filesystems ||
      skip "this kernel has no $fs (not built in, no module to load)"
  done
}

require_kernel_lab() {
  [ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
  [ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
  [ -e /dev/fuse ] || skip "no FUSE (/dev/fuse)"
  local c
  for c in nbdkit nbdfuse mke2fs e2fsck dumpe2fs fs_mark; do
    command -v "$c" >/dev/null || skip "$c is not installed"
  done
  require_filesystems ext4
}

cleanup() {
  local status=$?
  set +e
  local i
  for ((i=${#_mounts[@]}-1; i>=0; i--)); do
    mountpoint -q "${_mounts[i]}" && umount "${_mounts[i]}"
  done
  for ((i=${#_attachments[@]}-1; i>=0; i--)); do
    if [ -e "${_attachments[i]}/attach.log" ]; then "$NVJ" detach --state "${_attachments[i]}"; fi
  done
  for pid in "${_servers[@]}"; do  # servers, and nvj experiments: they tear down on SIGTERM
    if kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null; fi
  done
  if [ "$status" != 0 ] && [ "$status" != 77 ] && [ -n "${NVJ_TEST_KEEP:-}" ]; then
    local kept
    kept="$NVJ_TEST_KEEP/$(basename "$0" .sh)-$$"
    mkdir -p "$NVJ_TEST_KEEP" && mv "$T" "$kept" && echo "the scratch folder is kept in $kept"
  fi
  rm -rf "$T" "$TMPDIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME PARAM... : nbdkit with the plugin and PARAMs on
# $T/NAME.sock, serving when it returns; sets SERVER_PID. Its output goes
# to $T/NAME.log.
# With NVJ_TEST_PRELOAD (the sanitized build's runtimes, set by ctest there)
# nbdkit, which is not built with ASan, loads them first, and only reports
# the plugin's errors, not its own leaks.
start_server() {
  try_start_server "$@" || fail "nbdkit $1 did not start"
}

# try_start_server NAME PARAM... : start_server, but returns 1 if nbdkit
# does not start (why, and its log $T/NAME.log, are on stderr).
try_start_server() {
  local name=$1; shift
  local preload=()
  if [ -n "${NVJ_TEST_PRELOAD:-}" ]; then
    preload=(env "LD_PRELOAD=$NVJ_TEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
  fi
  nbdkit_start "$T/$name.pid" "$T/$name.log" \
    "${preload[@]}" nbdkit --foreground --exit-with-parent -U "$T/$name.sock" -P "$T/$name.pid" "$NVJ_PLUGIN" "$@" ||
    return 1
  SERVER_PID=$NBDKIT_PID
  _servers+=("$SERVER_PID")
}

# start_tls_server NAME PSKFILE PARAM... : as start_server, but on TCP at
# 127.0.0.1 on a free port (SERVER_PORT), TLS required with the pre-shared
# keys of PSKFILE (nbdkit --tls=require --tls-psk=PSKFILE).
start_tls_server() {
  local name=$1 psk=$2 try
  shift 2
  local preload=()
  if [ -n "${NVJ_TEST_PRELOAD:-}" ]; then
    preload=(env "LD_PRELOAD=$NVJ_TEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
  fi
  for try in 1 2 3 4 5; do  # another program may take the port between the choice and nbdkit's bind
    SERVER_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if nbdkit_start "$T/$name.pid" "$T/$name.log" "${preload[@]}" nbdkit --foreground --exit-with-parent \
        --tls=require --tls-psk="$psk" -i 127.0.0.1 -p "$SERVER_PORT" -P "$T/$name.pid" "$NVJ_PLUGIN" "$@"; then
      SERVER_PID=$NBDKIT_PID
      _servers+=("$SERVER_PID")
      return 0
    fi
    grep -q 'Address already in use' "$T/$name.log" || break
  done
  fail "nbdkit $name did not start"
}

# stop_server PID : SIGTERM and wait; fails unless nbdkit exits cleanly.
stop_server() {
  local status=0
  nbdkit_stop "$1" || status=$?
  [ "$status" = 0 ] || fail "nbdkit (pid $1) exited with $status"
}

# attach NAME SERVER [OPTION]... : nvj attach; sets DATA_DEV and JOURNAL_DEV
# (empty when the server has no journal export: an internal journal).
attach() {
  local state="$T/$1.attach"
  _attachments+=("$state")
  local out
  out=$("$NVJ" attach --state "$state" "${@:2}")
  echo "$out" | tee "$T/$1.devices"
  DATA_DEV=$(awk '$1 == "data" { print $2 }' <<<"$out")
  JOURNAL_DEV=$(awk '$1 == "journal" { print $2 }' <<<"$out")
  [ -b "$DATA_DEV" ] || fail "nvj attach $2: no block device for the data export"
  [ -z "$JOURNAL_DEV" ] || [ -b "$JOURNAL_DEV" ] || fail "nvj attach $2: $JOURNAL_DEV is not a block device"
}

detach() {  # the devices released first (see released)
  local dev
  for dev in $(awk '{print $2}' "$T/$1.devices" 2>/dev/null); do released "$dev" || return 1; done
  "$NVJ" detach --state "$T/$1.attach"
}

# mount_fs DIR : ext4 on DATA_DEV with data=journal, its journal on
# JOURNAL_DEV when there is one.
mount_fs() {
  mkdir -p "$1"
  mount -t ext4 -o "data=journal${JOURNAL_DEV:+,journal_path=$JOURNAL_DEV}" "$DATA_DEV" "$1"
  _mounts+=("$1")
}

# released DEVICE... : waits (up to 10 s) until nothing holds the devices
# exclusively. An umount returns at once, yet a mount namespace another
# process made meanwhile (an unshare, a container) keeps the filesystem
# mounted there, its journal open, until that process is gone.
released() {
  python3 - "$@" <<'PY'
import errno, os, sys, time
end = time.monotonic() + 10
for device in sys.argv[1:]:
    while True:
        try:
            os.close(os.open(device, os.O_RDONLY | os.O_EXCL))
            break
        except OSError as e:
            if e.errno != errno.EBUSY:
                break  # gone, or not ours to open: nothing to wait for
            if time.monotonic() > end:
                sys.exit(f"{device} is still held 10 s after its unmount")
            time.sleep(0.02)
PY
}

# fsck_clean : both devices clean, and nothing left to recover (once the
# kernel has let go of them).
fsck_clean() {
  released "$DATA_DEV" ${JOURNAL_DEV:+"$JOURNAL_DEV"} || return 1
  if dumpe2fs -h "$DATA_DEV" 2>/dev/null | grep -q needs_recovery; then
    echo "needs_recovery is still set on $DATA_DEV"; return 1
  fi
  e2fsck -fn ${JOURNAL_DEV:+-j "$JOURNAL_DEV"} "$DATA_DEV"
}

# experiment_leftovers PID [KIND] : fails if nvj experiment PID (or nvj
# crash run or record, KIND crash) left a loop device, a mount, its run
# folder or a server behind.
experiment_leftovers() {
  local dir="/run/nvjournal/${2:-experiment}-$1/"
  if losetup -a | grep -q "$dir"; then echo "a loop device is left"; return 1; fi
  if losetup -a | grep -q "/nvj-crash-$1-"; then echo "a loop device of the ground truth is left"; return 1; fi
  if compgen -G "$TMPDIR/nvj-crash-$1-*" >/dev/null; then echo "the ground truth's scratch is left"; return 1; fi
  # The explorer's checks (each in a process of its own) keep their scratch
  # in this test's TMPDIR too: one whose process is gone was left behind
  # (one that is still running is this test's other run's).
  local left pid
  for left in "$TMPDIR"/nvj-crash-*; do
    [ -e "$left" ] || continue
    pid=${left#"$TMPDIR"/nvj-crash-}
    pid=${pid%%-*}
    if ! kill -0 "$pid" 2>/dev/null && [ -e "$left" ]; then echo "a check's scratch is left: $left"; return 1; fi
  done
  for pid in $(losetup -a | sed -n "s|.*$TMPDIR/nvj-crash-\\([0-9]*\\)-.*|\\1|p"); do
    if ! kill -0 "$pid" 2>/dev/null && losetup -a | grep -q "$TMPDIR/nvj-crash-$pid-"; then
      echo "a loop device of a check's ground truth is left (process $pid)"; return 1
    fi
  done
  if grep -q "$dir" /proc/self/mountinfo; then echo "a mount is left"; return 1; fi
  if [ -e "$dir" ]; then echo "the run folder is left"; return 1; fi
  if pgrep -f "$dir" >/dev/null; then echo "a server is left"; return 1; fi
}

# expect_files DIR NAME... : fails unless every DIR/NAME exists and is not empty.
expect_files() {
  local dir=$1 f; shift
  for f in "$@"; do
    [ -s "$dir/$f" ] || { echo "$f missing or empty"; return 1; }
  done
}

# run_experiment ARGS... : nvj experiment ARGS, its output in $T/log and
# shown; fails unless it exits 0 and leaves nothing behind. In the
# background to know its PID, hence its run folder (others may run).
run_experiment() {
  "$NVJ" experiment "$@" >"$T/log" &
  local pid=$! status=0
  _servers+=("$pid")  # stopped (it tears down on SIGTERM) if the test fails first
  wait "$pid" || status=$?
  _servers=()
  cat "$T/log"
  [ "$status" = 0 ] || { echo "nvj experiment $* exited $status"; return 1; }
  experiment_leftovers "$pid"
}

# crc32c FILE [UNIT] : the CRC-32C that facts carry (Castagnoli, reflected,
# as ext4's) of FILE, in hex; with UNIT, of each UNIT bytes of it, separated
# by spaces (as a nostale fact lists blocks).
crc32c() {
  python3 - "$1" "${2:-0}" <<'PY'
import sys
table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    table.append(c)
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return "%08x" % (crc ^ 0xFFFFFFFF)
data, unit = open(sys.argv[1], "rb").read(), int(sys.argv[2])
print(" ".join(crc32c(data[i:i + unit]) for i in range(0, len(data), unit)) if unit else crc32c(data))
PY
}

# run_crash LOG COMMAND ARGS... : nvj crash COMMAND (run or record) ARGS in
# the background (its PID names its run folder), shown; sets STATUS; fails
# if it left anything behind.
run_crash() {
  local log=$1; shift
  "$NVJ" crash "$@" >"$log" 2>&1 &
  local pid=$!
  _servers+=("$pid")
  STATUS=0
  wait "$pid" || STATUS=$?
  _servers=()
  cat "$log"
  experiment_leftovers "$pid" crash || fail "nvj crash $* left something behind"
}

# run_explore LOG ARGS... : nvj crash explore ARGS in the background (its
# PID names its run folders), the end of its output shown; sets STATUS;
# fails if it left a mount, a loop device, a server, a guest (--vm) or a
# run folder behind.
run_explore() {
  local log=$1; shift
  "$NVJ" crash explore "$@" >"$log" 2>&1 &
  local pid=$!
  _servers+=("$pid")
  STATUS=0
  wait "$pid" || STATUS=$?
  _servers=()
  tail -n 8 "$log"
  experiment_leftovers "$pid" explore || fail "nvj crash explore $* left something behind"
  [ ! -e "/run/nvjournal/vm-$pid" ] || fail "nvj crash explore $* left its guest's run folder"
  ! pgrep -f "/run/nvjournal/vm-$pid/" >/dev/null || fail "nvj crash explore $* left a guest or a server running"
}

# valid_json SCHEMA FILE... : fails unless every FILE matches
# docs/schemas/SCHEMA (the validator names the file, the JSON path and what
# is wrong).
valid_json() {
  local schema=$1 top
  shift
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  "$top/tests/support/validate_json.py" "$top/docs/schemas/$schema" "$@" || { echo "$* do not match $schema"; return 1; }
}
