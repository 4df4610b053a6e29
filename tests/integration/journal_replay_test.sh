#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj journal replay against e2fsck on journals the host kernel wrote. Each
# scenario mounts a small ext4 image through a loop device (buffered, so every
# block the kernel has written is in the backing file's page cache), writes
# with fsync only (a commit each, nothing written home: no sync/syncfs, which
# would write the metadata home) and copies the backing file while the
# filesystem is still mounted: a crash image, its journal to be recovered.
# Then, on two sparse copies of it,
#   E2FSCK_TIME=T e2fsck -E journal_only -y [-j JOURNAL_COPY] COPY   (no -f)
#   nvj journal replay COPY [--journal JOURNAL_COPY] --time T
# must leave the filesystem images, and the external journal images, byte for
# byte the same. Also: dumpe2fs shows needs_recovery on every crash image but
# the clean one, and nvj journal inspect --json on the crash image counts as
# many replayed transactions as the replay reports.
#
# Scenarios: 4 KiB blocks, several committed transactions; 1 KiB blocks with
# a 1 MiB journal whose live log wraps past its end; revoke records (a
# directory deleted after its blocks were journalled: replay must skip the
# revoked copies); data=journal
# with files truncated after their data was journalled; the same home blocks
# logged by many transactions; external journals with 4 KiB and 1 KiB blocks;
# a 640 MiB journal whose inode has an extent index level; and, made from the
# 4 KiB crash image, a zeroed last commit block (an uncommitted transaction),
# a bad commit checksum and a bad descriptor checksum; and a cleanly unmounted
# image (nothing changes). Not covered: an unlinked file still open at the
# crash (an orphan), which e2fsck releases after the replay and nvj does not.
#
# A scenario whose crash image lacks the state it needs (a log that wraps,
# revoke blocks, transactions to replay) writes more and takes another
# snapshot, a bounded number of times.
#
# Needs NVJ; root and loop devices (exit 77 otherwise). No server: NVJ_PLUGIN
# is not used.
NVJ_PLUGIN=${NVJ_PLUGIN:-unused}
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (loop devices and mounts)"
[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
for c in mke2fs e2fsck dumpe2fs debugfs losetup mount umount python3 cmp; do
  command -v "$c" >/dev/null || skip "$c is not installed"
done
require_filesystems ext4

NOW=1700000000   # the time both tools write into s_wtime
MNT=$T/mnt
started=$SECONDS

# Loop devices this test attached, as DEV=BACKING_FILE (mounts go to lib.sh's
# _mounts): unmounted and detached on exit however it ends, a device only if
# it still shows our file; then lib.sh's cleanup, with the exit status kept.
_loops=()
release_all() {
  local i dev file
  for ((i = ${#_mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "${_mounts[i]}" && umount "${_mounts[i]}"
  done
  for ((i = ${#_loops[@]} - 1; i >= 0; i--)); do
    dev=${_loops[i]%%=*} file=${_loops[i]#*=}
    if [ "$(losetup -nO BACK-FILE "$dev" 2>/dev/null)" = "$file" ]; then losetup -d "$dev"; fi
  done
  _loops=()
  return 0
}
trap 'status=$?; set +e; release_all; (exit "$status"); cleanup' EXIT

# loop_attach FILE : sets LOOP (not in a subshell, so that _loops keeps it).
loop_attach() {
  LOOP=$(losetup -f --show "$1")
  _loops+=("$LOOP=$(realpath "$1")")
}

# mount_dev DEV [OPTIONS] : on $MNT. No barriers: the loop device would
# flush its backing file on every commit, which changes nothing in what is
# written, only the time it takes. noinit_itable: no inode table zeroing in
# the background.
mount_dev() {
  mkdir -p "$MNT"
  mount -t ext4 -o "nobarrier,noinit_itable${2:+,$2}" "$1" "$MNT"
  _mounts+=("$MNT")
}

# The workload: files written and fsynced one by one, appends, truncations.
#   write DIR N SIZE : N new files of SIZE random bytes, each fsynced
#   append FILE...   : one byte appended to each, fsynced
#   truncate SIZE FILE... : each cut to SIZE bytes, fsynced
work() {
  python3 - "$@" <<'PY'
import os, sys
op, args = sys.argv[1], sys.argv[2:]
def fsync_dir(d):
    fd = os.open(d, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
if op == "write":
    d, n, size = args[0], int(args[1]), int(args[2])
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        with open(os.path.join(d, "f%05d" % i), "wb") as f:
            f.write(os.urandom(size))
            f.flush()
            os.fsync(f.fileno())
    fsync_dir(d)
elif op == "append":
    for p in args:
        with open(p, "ab") as f:
            f.write(b"x")
            f.flush()
            os.fsync(f.fileno())
elif op == "truncate":
    for p in args[1:]:
        with open(p, "r+b") as f:
            f.truncate(int(args[0]))
            os.fsync(f.fileno())
else:
    sys.exit("unknown operation " + op)
PY
}

# snapshot NAME IMAGE [JOURNAL_IMAGE] : the crash image(s), taken while the
# filesystem is mounted, as NAME.crash.img (and NAME.crash.jnl).
snapshot() {
  cp --sparse=always "$2" "$T/$1.crash.img"
  if [ -n "${3:-}" ]; then cp --sparse=always "$3" "$T/$1.crash.jnl"; fi
}

# inspect NAME : nvj journal inspect --json on the crash image, into
# NAME.inspect.json, which must match its schema.
inspect() {
  local j=()
  if [ -f "$T/$1.crash.jnl" ]; then j=(--journal "$T/$1.crash.jnl"); fi
  "$NVJ" journal inspect "$T/$1.crash.img" "${j[@]}" --json >"$T/$1.inspect.json" || return 1
  valid_json journal-inspect.schema.json "$T/$1.inspect.json"
}

# json NAME EXPR : EXPR in Python over j, NAME's inspect output.
json() {
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$T/$1.inspect.json" "$2"
}

# State checks on a crash image (after inspect).
has_replay() {
  [ "$(json "$1" 'j["replayed_transactions"] if j["needs_recovery"] and j["error"] == 0 else 0')" -ge "${2:-1}" ]
}
has_replays() { has_replay "$1" 5; }
# Revoke blocks in the log (nvj's count) that cancel the replay of blocks
# logged earlier in it (debugfs's logdump: a block logged by transaction L
# and revoked by R >= L is not replayed from L).
has_revokes() {
  [ "$(json "$1" 'sum(t["revoke_blocks"] for t in j["transactions"] if t["replayed"])')" -gt 0 ] || return 1
  local hits
  hits=$(debugfs -c -R "logdump -a" "$T/$1.crash.img" 2>/dev/null | awk '
    /^Found expected sequence/ { seq = $4 + 0 }
    /^  FS block [0-9]+ logged at/ { if (!($3 in logged)) logged[$3] = seq }
    /^  Revoke FS block [0-9]+/ { if (!($4 in revoked) || seq > revoked[$4]) revoked[$4] = seq }
    END { n = 0; for (b in revoked) if ((b in logged) && logged[b] <= revoked[b]) n++; print n }')
  echo "  $1: $hits logged block(s) revoked"
  [ "$hits" -gt 0 ]
}
# The live log wraps: its log block numbers, in order, go down somewhere.
has_wrap() {
  [ "$(json "$1" '(lambda b: int(any(x > y for x, y in zip(b, b[1:]))))([n for t in j["transactions"] if t["replayed"] for n in (t["first_log_block"], t["commit_log_block"])])')" = 1 ]
}

# show_diff A B : how many bytes differ, and the first 40 (cmp -l: offset
# from 1, then A's and B's byte in octal).
show_diff() {
  local diffs
  diffs=$(cmp -l "$1" "$2" || true)
  echo "    $(wc -l <<<"$diffs") byte(s) differ; offset, e2fsck's, nvj's (octal):"
  head -40 <<<"$diffs" | sed 's/^/    /'
}

failures=()
passed=()
# A scenario that fails is reported and the next one runs; the list of
# failures ends the script (lib.sh's fail stops it at once).
fail_scenario() { echo "FAIL: $*"; failures+=("$*"); }

# compare NAME [clean] : the crash image (and journal) through e2fsck and
# through nvj, on separate copies; the results must be byte for byte equal.
compare() {
  local n=$1 kind=${2:-replay} ej=() nj=() rc=0 out count
  local crash=$T/$n.crash.img jcrash=$T/$n.crash.jnl
  echo "== $n"
  if dumpe2fs -h "$crash" 2>/dev/null | grep -q '^Filesystem features:.*needs_recovery'; then
    [ "$kind" = replay ] || { fail_scenario "$n: needs_recovery set on a clean image"; return; }
  else
    [ "$kind" = clean ] || { fail_scenario "$n: dumpe2fs does not show needs_recovery on the crash image"; return; }
  fi
  inspect "$n" || { fail_scenario "$n: nvj journal inspect --json failed on the crash image"; return; }
  cp --sparse=always "$crash" "$T/$n.e2fsck.img"
  cp --sparse=always "$crash" "$T/$n.nvj.img"
  if [ -f "$jcrash" ]; then
    cp --sparse=always "$jcrash" "$T/$n.e2fsck.jnl"
    cp --sparse=always "$jcrash" "$T/$n.nvj.jnl"
    ej=(-j "$T/$n.e2fsck.jnl")
    nj=(--journal "$T/$n.nvj.jnl")
  fi
  E2FSCK_TIME=$NOW e2fsck "${ej[@]}" -E journal_only -y "$T/$n.e2fsck.img" >"$T/$n.e2fsck.out" 2>&1 || rc=$?
  sed 's/^/  e2fsck: /' "$T/$n.e2fsck.out"
  [ "$rc" = 0 ] || { fail_scenario "$n: e2fsck -E journal_only exited with $rc"; return; }
  out=$(env -u E2FSCK_TIME "$NVJ" journal replay "$T/$n.nvj.img" "${nj[@]}" --time "$NOW" 2>&1) ||
    { echo "$out"; fail_scenario "$n: nvj journal replay failed"; return; }
  sed 's/^/  nvj: /' <<<"$out"
  if [ "$kind" = clean ]; then
    grep -q 'the journal is clean' <<<"$out" || { fail_scenario "$n: nvj replayed a clean journal"; return; }
    count=0
  else
    count=$(sed -n 's/.*: replayed \([0-9]*\) transactions.*/\1/p' <<<"$out")
    [ -n "$count" ] || { fail_scenario "$n: no transaction count in nvj's replay output"; return; }
  fi
  local inspected
  inspected=$(json "$n" 'j["replayed_transactions"]')
  [ "$inspected" = "$count" ] ||
    { fail_scenario "$n: inspect --json counts $inspected replayed transactions, replay $count"; return; }
  local same=1
  if ! cmp -s "$T/$n.e2fsck.img" "$T/$n.nvj.img"; then
    same=0
    echo "  the filesystem image differs:"
    show_diff "$T/$n.e2fsck.img" "$T/$n.nvj.img"
  fi
  if [ -f "$jcrash" ] && ! cmp -s "$T/$n.e2fsck.jnl" "$T/$n.nvj.jnl"; then
    same=0
    echo "  the journal image differs:"
    show_diff "$T/$n.e2fsck.jnl" "$T/$n.nvj.jnl"
  fi
  [ "$same" = 1 ] || { fail_scenario "$n: nvj's replay differs from e2fsck's"; return; }
  if [ "$kind" = clean ] && ! cmp -s "$crash" "$T/$n.nvj.img"; then
    fail_scenario "$n: a clean image was changed"; return
  fi
  echo "  identical ($count transactions replayed)"
  passed+=("$n")
  rm -f "$T/$n".{e2fsck,nvj}.{img,jnl}
}

# end_scenario : unmount and detach everything (the next scenario starts
# afresh).
end_scenario() {
  release_all
  rm -f "$T"/work.img "$T"/work.jnl
}

# new_fs BLOCK_SIZE SIZE [MKE2FS OPTIONS...] : $T/work.img with ext4.
new_fs() {
  local bs=$1 size=$2; shift 2
  rm -f "$T/work.img"
  truncate -s "$size" "$T/work.img"
  mke2fs -q -F -t ext4 -O metadata_csum -b "$bs" "$@" "$T/work.img"
}

# scenario NAME TRIES CHECK ROUND_COMMAND... : runs the round and takes a
# snapshot until CHECK NAME passes on it, at most TRIES times (the round
# number is in $round); then unmounts and detaches everything and compares
# the crash image. Sets TAKEN to 1 when there was a crash image to compare.
# (Never returns an error, so that it runs under set -e: a function called in
# a condition would not.)
scenario() {
  local n=$1 tries=$2 check=$3
  shift 3
  TAKEN=0
  for ((round = 1; round <= tries; round++)); do
    "$@"
    snapshot "$n" "$T/work.img" ${JIMG:+"$JIMG"}
    if inspect "$n" && "$check" "$n"; then
      echo "  $n: crash image after $round round(s)"
      TAKEN=1
      break
    fi
  done
  end_scenario
  if [ "$TAKEN" = 1 ]; then
    compare "$n"
  else
    fail_scenario "$n: no crash image with the state needed after $tries rounds"
  fi
}

# damage NAME FROM WHAT : NAME.crash.img is FROM's with WHAT done to the last
# committed transaction of its (internal) journal: zero its commit block,
# flip a byte of the commit checksum, flip the last byte of its last
# descriptor block (the checksum tail). Sets DAMAGED to 1 when it could.
damage() {
  local n=$1 from=$2 what=$3 lblk pblk bs off
  DAMAGED=0
  cp --sparse=always "$T/$from.crash.img" "$T/$n.crash.img"
  bs=$(json "$from" 'j["block_size"]')
  case $what in
    zero-commit | flip-commit)
      lblk=$(json "$from" '[t["commit_log_block"] for t in j["transactions"] if t["commit_log_block"] is not None][-1]') ;;
    flip-descriptor)
      # The last descriptor block in the log, as debugfs's logdump finds it.
      lblk=$(debugfs -c -R logdump "$T/$from.crash.img" 2>/dev/null |
        awk '/type 1 \(descriptor block\) at block/ { b = $NF } END { print b }') ;;
  esac
  pblk=$(debugfs -c -R "bmap <8> $lblk" "$T/$from.crash.img" 2>/dev/null)
  if ! [[ "$pblk" =~ ^[0-9]+$ ]]; then
    fail_scenario "$n: no physical block for journal block $lblk"
    return 0
  fi
  case $what in
    zero-commit) dd if=/dev/zero of="$T/$n.crash.img" bs="$bs" seek="$pblk" count=1 conv=notrunc status=none ;;
    flip-commit | flip-descriptor)
      off=$((pblk * bs + 16))  # h_chksum[0] of a commit block
      if [ "$what" = flip-descriptor ]; then off=$(((pblk + 1) * bs - 1)); fi  # the descriptor's tail
      python3 - "$T/$n.crash.img" "$off" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xFF]))
PY
      ;;
  esac
  echo "  $n: $what at journal block $lblk (fs block $pblk)"
  DAMAGED=1
}

# expect NAME PYTHON_TEST E2FSCK_MESSAGE : the damage shows, in nvj's inspect
# output and in e2fsck's.
expect() {
  [ "$(json "$1" "int(bool($2))")" = 1 ] || fail_scenario "$1: nvj journal inspect does not show $2"
  grep -q "$3" "$T/$1.e2fsck.out" || fail_scenario "$1: e2fsck did not say '$3'"
}

JIMG=""

echo "### 4 KiB blocks, internal journal, several transactions"
new_fs 4096 64M
loop_attach "$T/work.img"
mount_dev "$LOOP"
a4k_round() {
  work write "$MNT/d$round" 20 5000
  mkdir -p "$MNT/e$round/sub"
  work write "$MNT/e$round/sub" 1 3
  work append "$MNT/e$round/sub/f00000"
}
scenario a4k 3 has_replays a4k_round
if [ "$TAKEN" = 1 ]; then
  a4k_transactions=$(json a4k 'j["replayed_transactions"]')
  damage g_uncommitted a4k zero-commit
  if [ "$DAMAGED" = 1 ]; then
    compare g_uncommitted
    expect g_uncommitted "j['replayed_transactions'] == $a4k_transactions - 1 and j['failed_commit'] is None" 'recovering journal'
  fi
  damage h_badcommit a4k flip-commit
  if [ "$DAMAGED" = 1 ]; then
    compare h_badcommit
    expect h_badcommit 'j["failed_commit"] is not None and j["error"] == 0' 'was corrupt, replay was aborted'
  fi
  damage l_baddesc a4k flip-descriptor
  if [ "$DAMAGED" = 1 ]; then
    compare l_baddesc
    expect l_baddesc 'j["error"] != 0 and j["replayed_transactions"] == 0' 'Journal checksum error found'
  fi
fi

echo "### 1 KiB blocks, 1 MiB internal journal, the live log wraps"
new_fs 1024 64M -J size=1
loop_attach "$T/work.img"
mount_dev "$LOOP"
wrap_round() { work write "$MNT/w$round" 40 100; }
scenario wrap1k 60 has_wrap wrap_round

echo "### revoke records: a directory of journalled blocks deleted"
# A 16 MiB journal: all of it stays in the log (nothing checkpointed).
new_fs 4096 64M -J size=16
loop_attach "$T/work.img"
mount_dev "$LOOP"
revoke_round() {
  work write "$MNT/big$round" 80 10
  rm -rf "$MNT/big$round"
  work write "$MNT/after$round" 3 1000  # commits the deletion; reuses the blocks
}
scenario revoke 5 has_revokes revoke_round

# (With data=journal the kernel never writes revoke records: freed blocks are
# only forgotten.)
echo "### data=journal, files truncated after their data was journalled"
new_fs 4096 64M
loop_attach "$T/work.img"
mount_dev "$LOOP" data=journal
dj_round() {
  work write "$MNT/d$round" 10 20000
  work truncate 100 "$MNT/d$round"/f0000[0-4]
  work write "$MNT/e$round" 4 9000
}
scenario datajournal 3 has_replays dj_round

echo "### the same home blocks logged by many transactions"
new_fs 4096 64M
loop_attach "$T/work.img"
mount_dev "$LOOP"
same_round() {
  mkdir -p "$MNT/s"
  local i
  for i in 0 1 2 3 4; do work append "$MNT/s/m0" "$MNT/s/m1" "$MNT/s/m2"; done
}
scenario sameblock 3 has_replay same_round

# external NAME BLOCK_SIZE JOURNAL_SIZE FILES FILE_SIZE
external() {
  local n=$1 bs=$2 jsize=$3 files=$4 fsize=$5
  echo "### external journal, $bs-byte blocks"
  JIMG=$T/work.jnl
  rm -f "$JIMG"
  truncate -s "$jsize" "$JIMG"
  mke2fs -q -F -O journal_dev -b "$bs" "$JIMG" >/dev/null
  loop_attach "$JIMG"
  local jdev=$LOOP
  new_fs "$bs" 64M -J "device=$jdev"
  loop_attach "$T/work.img"
  mount_dev "$LOOP" "journal_path=$jdev"
  ext_round() { work write "$MNT/d$round" "$files" "$fsize"; }
  scenario "$n" 3 has_replay ext_round
  JIMG=""
}
external ext4k 4096 16M 20 5000
external ext1k 1024 8M 40 3000

echo "### 640 MiB journal: the journal inode's extent tree has an index level"
new_fs 4096 4G -J size=640
debugfs -c -R "ex <8>" "$T/work.img" 2>/dev/null | grep -q '^ *0/ *[1-9]' ||
  fail_scenario "deepjnl: the journal inode has no extent index level"
loop_attach "$T/work.img"
mount_dev "$LOOP"
deep_round() {
  mkdir -p "$MNT/s"
  work append "$MNT/s/m0" "$MNT/s/m1" "$MNT/s/m2" "$MNT/s/m3"
  work write "$MNT/d$round" 10 3000
  work append "$MNT/s/m0" "$MNT/s/m1" "$MNT/s/m2" "$MNT/s/m3" "$MNT/s/m4"
}
scenario deepjnl 3 has_replay deep_round

echo "### cleanly unmounted: nothing to replay"
new_fs 4096 64M
loop_attach "$T/work.img"
mount_dev "$LOOP"
work write "$MNT/d1" 5 5000
umount "$MNT"
snapshot clean "$T/work.img"
end_scenario
compare clean clean

echo "### bad input: one clear error, the images left as they were"
# refuse CODE PATTERN ARGS... : nvj journal ARGS exits CODE with PATTERN said.
refuse() {
  local code=$1 pattern=$2 rc=0
  shift 2
  "$NVJ" journal "$@" >"$T/refused.out" 2>&1 || rc=$?
  if [ "$rc" != "$code" ] || ! grep -q -- "$pattern" "$T/refused.out"; then
    fail_scenario "nvj journal $*: exit $rc, expected $code and '$pattern': $(cat "$T/refused.out")"
  fi
}
cp --sparse=always "$T/ext4k.crash.img" "$T/bad.img"
cp --sparse=always "$T/ext4k.crash.jnl" "$T/bad.jnl"
head -c 1M /dev/urandom >"$T/junk.img"
cp "$T/junk.img" "$T/junk.copy"
refuse 2 "unknown command 'fix'" fix "$T/bad.img"
refuse 2 "which IMAGE?" replay
refuse 2 "which server?" top
refuse 2 "unknown option '--frobnicate'" replay "$T/bad.img" --frobnicate
refuse 2 "is a journal device already" inspect "$T/bad.jnl" --journal "$T/bad.jnl"
refuse 1 "$T/missing.img: No such file or directory" replay "$T/missing.img"
refuse 1 "the journal is external (uuid .*): give its device with --journal" replay "$T/bad.img"
refuse 1 "the --journal device has uuid .*, the filesystem's journal is" replay "$T/bad.img" --journal "$T/ext1k.crash.jnl"
refuse 1 "no ext2/3/4 magic number" replay "$T/junk.img"
cmp -s "$T/bad.img" "$T/ext4k.crash.img" || fail_scenario "a refused replay changed the filesystem image"
cmp -s "$T/bad.jnl" "$T/ext4k.crash.jnl" || fail_scenario "a refused replay changed the journal image"
cmp -s "$T/junk.img" "$T/junk.copy" || fail_scenario "a refused replay changed a file that is not ext4"

echo
echo "passed (${#passed[@]}): ${passed[*]}"
echo "time: $((SECONDS - started)) s"
[ ${#_loops[@]} = 0 ] || { echo "FAIL: loop devices left attached: ${_loops[*]}"; exit 1; }
if [ ${#failures[@]} != 0 ]; then
  printf 'FAIL: %s\n' "${failures[@]}"
  exit 1
fi
echo "PASS"
