#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj mkfs over a grid: sizes 8M, 100M, 1G, 70G and 3T (sparse, 4 KiB blocks
# only) x block sizes 1024, 2048, 4096 x journals internal, internal:SIZE,
# external:J.img:SIZE and none. Every image passes e2fsck -fn and shows the
# ext4 features and geometry in dumpe2fs; its superblock summary matches what
# mke2fs -t ext4 -O ^resize_inode makes of the same file. Some of them (each
# kind of journal with 1 KiB and 4 KiB blocks) are mounted through a loop
# device, written to, and checked again. A tree with every kind of file
# (sparse, fragmented and > 4 GiB files, 5000 entries in one directory, fast
# and slow symlinks, hard links, device nodes, a FIFO, a socket, odd names,
# setuid, owners, nanosecond and post-2038 times) is copied with --populate
# and compared file by file on the mounted copy. Then the refusals: a tree
# that does not fit, 1 TiB with 1 KiB blocks, an image that holds data
# without --force (left byte for byte as it was); and --label, --uuid.
#
# Needs NVJ; root and loop devices (exit 77 otherwise). No server: NVJ_PLUGIN
# is not used.
NVJ_PLUGIN=${NVJ_PLUGIN:-unused}
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (loop devices, mounts, device nodes, chown)"
[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
for c in mke2fs e2fsck dumpe2fs losetup mount umount python3 cmp truncate mknod mkfifo; do
  command -v "$c" >/dev/null || skip "$c is not installed"
done
require_filesystems ext4

started=$SECONDS
images=0
mounts=0

# Loop devices this test attached (mounts go to lib.sh's _mounts): unmounted
# and detached on exit, however it ends, and only if they still show our file.
_loops=()
grid_cleanup() {
  local status=$? i
  set +e
  for ((i = ${#_mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "${_mounts[i]}" && umount "${_mounts[i]}"
  done
  for ((i = ${#_loops[@]} - 1; i >= 0; i--)); do
    local dev=${_loops[i]%%=*} file=${_loops[i]#*=}
    if [ "$(losetup -nO BACK-FILE "$dev" 2>/dev/null)" = "$file" ]; then losetup -d "$dev"; fi
  done
  (exit "$status")
  cleanup  # lib.sh's: mounts again, then the scratch folder
}
trap grid_cleanup EXIT

die() { echo "FAIL: $*" >&2; exit 1; }

# loop_attach FILE : sets LOOP to the new loop device (not in a subshell,
# so that _loops keeps it).
loop_attach() {
  LOOP=$(losetup -f --show "$1")
  _loops+=("$LOOP=$(realpath "$1")")
}

loop_detach() {
  local dev=$1 kept=() entry
  losetup -d "$dev"
  for entry in "${_loops[@]}"; do [ "${entry%%=*}" = "$dev" ] || kept+=("$entry"); done
  _loops=("${kept[@]}")
}

bytes_of() {  # 8M -> 8388608
  local n=${1%[KMGT]}
  case $1 in
    *K) echo $((n << 10)) ;; *M) echo $((n << 20)) ;; *G) echo $((n << 30)) ;; *T) echo $((n << 40)) ;; *) echo "$1" ;;
  esac
}

field() {  # field NAME : from $SB, the dumpe2fs -h output
  sed -n "s/^$1: *//p" <<<"$SB" | head -n 1
}

# fsck_image IMAGE [JOURNAL_IMAGE] : e2fsck -fn exits 0.
fsck_image() {
  local out rc=0
  out=$(e2fsck -fn ${2:+-j "$2"} "$1" 2>&1) || rc=$?
  [ "$rc" = 0 ] || die "e2fsck -fn ${2:+-j $2 }$1 exited $rc:
$out"
}

# The superblock summary, without what differs between two runs of mke2fs.
summary() {
  dumpe2fs -h "$1" 2>/dev/null | grep -vE '^(Filesystem UUID|Directory Hash Seed|Checksum|Filesystem created|Last write time|Last mount time|Last checked|Lifetime writes|Overhead clusters|Journal UUID|Journal device|Journal checksum):'
}

# The journal superblock's s_nr_users (big-endian at byte 0x40) of a journal
# device: its jbd2 superblock is the block after the one holding the ext4
# superblock at byte 1024.
journal_users() {
  local bs=$1 image=$2
  local at=$(((1024 / bs + 1) * bs + 0x40))
  od -An -tx1 -j "$at" -N4 "$image" | tr -d ' \n' | python3 -c 'import sys; print(int(sys.stdin.read(), 16))'
}

# check_image IMAGE SIZE BS JOURNAL : fsck, features, geometry, journal.
check_image() {
  local img=$1 size=$2 bs=$3 journal=$4 jimg="" jsize=""
  case $journal in external:*) jimg=${journal#external:}; jsize=${jimg##*:}; jimg=${jimg%:*} ;; esac
  fsck_image "$img" "$jimg"
  SB=$(dumpe2fs -h "$img" 2>/dev/null) || die "dumpe2fs -h $img failed"
  local features f
  features=" $(field 'Filesystem features') "
  for f in ext_attr dir_index filetype extent 64bit flex_bg sparse_super large_file huge_file dir_nlink extra_isize metadata_csum; do
    [[ $features == *" $f "* ]] || die "$img: feature $f missing:$features"
  done
  for f in resize_inode journal_dev needs_recovery meta_bg; do
    [[ $features != *" $f "* ]] || die "$img: unexpected feature $f:$features"
  done
  if [ "$journal" = none ]; then
    [[ $features != *" has_journal "* ]] || die "$img: has_journal without a journal"
  else
    [[ $features == *" has_journal "* ]] || die "$img: no has_journal:$features"
  fi
  [ "$(field 'Block size')" = "$bs" ] || die "$img: block size $(field 'Block size'), not $bs"
  [ "$(field 'Block count')" = $(($(bytes_of "$size") / bs)) ] ||
    die "$img: block count $(field 'Block count'), not $(($(bytes_of "$size") / bs))"
  [ "$(field 'Filesystem state')" = clean ] || die "$img: state $(field 'Filesystem state')"
  case $journal in
    internal:*)
      local want total
      want=$(bytes_of "${journal#internal:}")
      total=$(field 'Total journal blocks')
      [ $((total * bs)) = "$want" ] || die "$img: journal of $total blocks of $bs, not ${journal#internal:}"
      total=$(field 'Total journal size')  # 4096k, 16M, 2048M
      [ "$(bytes_of "${total/k/K}")" = "$want" ] || die "$img: Total journal size $total, not ${journal#internal:}"
      [ "$(field 'Journal inode')" = 8 ] || die "$img: journal inode $(field 'Journal inode')"
      ;;
    internal)
      [ "$(field 'Journal inode')" = 8 ] || die "$img: journal inode $(field 'Journal inode')"
      ;;
    external:*)
      local fs_uuid journal_uuid
      fs_uuid=$(field 'Filesystem UUID')
      journal_uuid=$(field 'Journal UUID')
      [ -n "$journal_uuid" ] || die "$img: no Journal UUID"
      SB=$(dumpe2fs -h "$jimg" 2>/dev/null) || die "dumpe2fs -h $jimg failed"
      [ "$(field 'Filesystem features')" = journal_dev ] || die "$jimg: features $(field 'Filesystem features')"
      [ "$(field 'Filesystem UUID')" = "$journal_uuid" ] ||
        die "$img's Journal UUID $journal_uuid is not $jimg's Filesystem UUID $(field 'Filesystem UUID')"
      [ "$(field 'Block size')" = "$bs" ] || die "$jimg: block size $(field 'Block size'), not $bs"
      [ "$(field 'Block count')" = $(($(bytes_of "$jsize") / bs)) ] || die "$jimg: block count $(field 'Block count')"
      # dumpe2fs prints "Journal number of users" only when it is not 1;
      # read the count itself too.
      [ -z "$(field 'Journal number of users')" ] || die "$jimg: Journal number of users: $(field 'Journal number of users')"
      [ "$(journal_users "$bs" "$jimg")" = 1 ] || die "$jimg: s_nr_users is $(journal_users "$bs" "$jimg"), not 1"
      [ "$(field 'Journal users')" = "$fs_uuid" ] || die "$jimg: Journal users $(field 'Journal users'), not $fs_uuid"
      ;;
  esac
}

# same_as_mke2fs IMAGE SIZE BS JOURNAL : the superblock summary equals
# mke2fs's for the same size, block size and journal (an external journal is
# compared with mke2fs's no-journal filesystem, has_journal aside).
# mke2fs_ref SIZE BS JOURNAL : mke2fs makes the same filesystem in
# $T/mke2fs.img (a fresh sparse file); fails where mke2fs refuses.
mke2fs_ref() {
  local size=$1 bs=$2 journal=$3 ref=$T/mke2fs.img
  MKE2FS_OPTS=(-q -F -t ext4 -O ^resize_inode -b "$bs")
  case $journal in
    internal:*) MKE2FS_OPTS+=(-J "size=$(($(bytes_of "${journal#internal:}") >> 20))") ;;
    none | external:*) MKE2FS_OPTS+=(-O ^has_journal) ;;
  esac
  rm -f "$ref"
  truncate -s "$size" "$ref"
  mke2fs "${MKE2FS_OPTS[@]}" "$ref" >"$T/mke2fs.out" 2>&1
}

same_as_mke2fs() {
  local img=$1 size=$2 bs=$3 journal=$4 ref=$T/mke2fs.img ours theirs
  mke2fs_ref "$size" "$bs" "$journal" || die "mke2fs ${MKE2FS_OPTS[*]} failed on $size: $(cat "$T/mke2fs.out")"
  ours=$(summary "$img")
  theirs=$(summary "$ref")
  if [[ $journal == external:* ]]; then
    ours=$(sed -E 's/^(Filesystem features: .*)has_journal /\1/' <<<"$ours")
  fi
  rm -f "$ref"
  [ "$ours" = "$theirs" ] || die "$img ($size, $bs, $journal) differs from mke2fs ${MKE2FS_OPTS[*]}:
$(diff <(echo "$ours") <(echo "$theirs"))"
}

# mount_image DIR IMAGE [JOURNAL_IMAGE] [OPTIONS] : mounts through loop
# devices; sets DEV (and JDEV).
mount_image() {
  local dir=$1 img=$2 jimg=${3:-} opts=${4:-}
  loop_attach "$img"
  DEV=$LOOP
  JDEV=""
  if [ -n "$jimg" ]; then
    loop_attach "$jimg"
    JDEV=$LOOP
    opts=${opts:+$opts,}journal_path=$JDEV
  fi
  mkdir -p "$dir"
  mount -t ext4 ${opts:+-o "$opts"} "$DEV" "$dir"
  _mounts+=("$dir")
  mounts=$((mounts + 1))
}

unmount_image() {
  umount "$1"
  loop_detach "$DEV"
  [ -z "$JDEV" ] || loop_detach "$JDEV"
}

# write_and_check IMAGE [JOURNAL_IMAGE] : the kernel writes files, e2fsck is
# clean after umount, and a read-only mount reads them back.
write_and_check() {
  local img=$1 jimg=${2:-} m=$T/mnt i
  mount_image "$m" "$img" "$jimg"
  mkdir -p "$m/w/sub"
  for i in $(seq 1 20); do head -c $((i * 2777)) /dev/urandom >"$m/w/f$i"; done
  head -c $((1 << 20)) /dev/urandom >"$m/w/sub/onemeg"
  ln -s "$(printf 'l%.0s' $(seq 1 100))" "$m/w/longlink"
  rm "$m/w/f7"
  (cd "$m" && find w -type f -print0 | sort -z | xargs -0 sha256sum) >"$T/sums"
  sync
  unmount_image "$m"
  fsck_image "$img" "$jimg"
  mount_image "$m" "$img" "$jimg" ro
  (cd "$m" && sha256sum --quiet -c "$T/sums") || die "$img: files written through the kernel read back wrong"
  unmount_image "$m"
}

# --- the tree to populate from ---------------------------------------------
make_tree() {
  local d=$1
  mkdir -p "$d"
  # Contents (deterministic), in Python: random bytes, holes, odd names, a socket.
  python3 - "$d" <<'PY'
import os, random, socket, sys
root = os.fsencode(sys.argv[1])
rnd = random.Random(20240601)
def p(*parts):
    return os.path.join(root, *[x if isinstance(x, bytes) else os.fsencode(x) for x in parts])
def put(path, data):
    with open(path, "wb") as f:
        f.write(data)
os.makedirs(p("a/b/c/d/e"))
for name in ("many", "dir with space", "setgid_dir", "sticky", "empty_dir"):
    os.mkdir(p(name))
put(p("empty"), b"")
put(p("small"), rnd.randbytes(100))
put(p("oneblock"), rnd.randbytes(4096))
put(p("a/b/c/d/e/deep"), rnd.randbytes(12345))
put(p("big"), rnd.randbytes(3 * 1048576 + 17))
put(p("setuid"), b"#!/bin/sh\n")
with open(p("sparse"), "wb") as f:      # holes before, between and after
    f.seek(1 << 20); f.write(rnd.randbytes(8192))
    f.seek(40 << 20); f.write(rnd.randbytes(5000))
    f.truncate(64 << 20)
with open(p("fragmented"), "wb") as f:  # 300 extents: an extent tree with leaves
    for i in range(300):
        f.seek(i * 65536); f.write(rnd.randbytes(4096))
with open(p("huge_sparse"), "wb") as f:  # past 4 GiB: large_file, high size bits
    f.write(rnd.randbytes(4096))
    f.seek((5 << 30) - 1000); f.write(rnd.randbytes(1000))
for i in range(5000):
    put(p("many", "entry-%05d-%s" % (i, "x" * (i % 40))), rnd.randbytes(i % 700) if i % 3 == 0 else b"")
put(p("with space"), rnd.randbytes(10))
put(p("new\nline"), rnd.randbytes(11))
put(p("n" * 255), rnd.randbytes(12))
put(p(b"\xff\xfe-not-utf8-\xe9"), rnd.randbytes(13))
put(p("dir with space", "inside"), rnd.randbytes(14))
cwd = os.getcwd()
os.chdir(root)  # a short path for bind()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(b"socket")
s.close()
os.chdir(cwd)
PY
  # Links, nodes, modes and owners with the usual tools.
  ln -s small "$d/link_short"
  ln -s "$(printf 's%.0s' $(seq 1 59))" "$d/link59"   # the longest fast symlink
  ln -s "$(printf 't%.0s' $(seq 1 60))" "$d/link60"   # the shortest slow one
  ln -s "a/b/c/d/e/$(printf 'long%.0s' $(seq 1 70))" "$d/link_long_dangling"
  ln -s a/b/c/d/e/deep "$d/link_deep"
  ln "$d/small" "$d/a/small_hard"
  ln "$d/small" "$d/a/b/small_hard2"
  ln -P "$d/link_short" "$d/link_short_hard"
  mknod -m 0666 "$d/char_null" c 1 3
  mknod -m 0660 "$d/block_sda1" b 8 1
  mknod -m 0600 "$d/char_big" c 300 70000     # major and minor > 255: the new encoding
  mknod -m 0600 "$d/block_big" b 259 1048575
  mkfifo -m 0640 "$d/fifo"
  ln "$d/fifo" "$d/a/fifo_hard"
  chmod 4755 "$d/setuid"
  chmod 2775 "$d/setgid_dir"
  chmod 1777 "$d/sticky"
  chmod 0 "$d/oneblock"
  chmod 0751 "$d"
  chown 1234:5678 "$d/small" "$d/big"
  chown 100000:200000 "$d/sparse"              # ids above 16 bits
  chown -h 42:43 "$d/link_long_dangling"
  chown 7:8 "$d/a/b"
  chown 4321:8765 "$d"
  # Times last (adding entries changes a directory's): every entry its own
  # nanoseconds, then a few with touch -d, past 2038 and before 1970.
  python3 - "$d" <<'PY'
import os, sys
root = os.fsencode(sys.argv[1])
base = 1600000000 * 10**9
entries = []
for dirpath, dirnames, filenames in os.walk(root):
    entries += [os.path.join(dirpath, n) for n in dirnames + filenames]
for i, path in enumerate(sorted(entries, key=lambda e: -e.count(b"/"))):
    t = base + i * 1000003 + 123456789
    os.utime(path, ns=(t, t), follow_symlinks=False)
PY
  touch -d '2100-01-01 00:00:00.999999999 UTC' "$d/big"
  touch -d '2038-01-19 03:14:08.5 UTC' "$d/oneblock"
  touch -d '1960-06-01 12:00:00.25 UTC' "$d/empty"
  touch -h -d '2021-03-04 05:06:07.123456789 UTC' "$d/link_short"
  touch -d '2001-02-03 04:05:06.000000001 UTC' "$d/a" "$d"
}

# compare SOURCE MOUNTED : the copy, file by file.
compare_trees() {
  python3 - "$1" "$2" <<'PY'
import os, stat, sys
src, dst = (os.fsencode(a) for a in sys.argv[1:3])
errors = []
def bad(path, what):
    errors.append(f"{os.fsdecode(path)!r}: {what}")
bs = os.statvfs(dst).f_bsize

def data_ranges(fd, size):
    ranges, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        ranges.append((start, end))
        pos = end
    return ranges

def same_content(a, b, size):
    """Compares the bytes where either file has data; elsewhere both are holes."""
    with open(a, "rb") as fa, open(b, "rb") as fb:
        spans = sorted(data_ranges(fa.fileno(), size) + data_ranges(fb.fileno(), size))
        for start, end in spans:
            pos = start
            while pos < end:
                n = min(1 << 20, end - pos)
                if os.pread(fa.fileno(), n, pos) != os.pread(fb.fileno(), n, pos):
                    return False
                pos += n
        return True

def allocated_limit(path, size):
    """What the copy may allocate: the source's data rounded out to blocks,
    and the extent tree's leaves."""
    with open(path, "rb") as f:
        ranges = data_ranges(f.fileno(), size)
    data = sum((e + bs - 1) // bs - s // bs for s, e in ranges) * bs
    return data + (len(ranges) // ((bs - 12) // 12) + 2) * bs

inodes = {}  # source inode -> copy inode, for hard links
def walk(rel):
    s, d = os.path.join(src, rel), os.path.join(dst, rel)
    try:
        ss, ds = os.lstat(s), os.lstat(d)
    except FileNotFoundError as e:
        bad(rel, f"missing: {e}")
        return
    if stat.S_IFMT(ss.st_mode) != stat.S_IFMT(ds.st_mode):
        bad(rel, f"type {stat.filemode(ss.st_mode)} became {stat.filemode(ds.st_mode)}"); return
    if ss.st_mode != ds.st_mode: bad(rel, f"mode {ss.st_mode:o} became {ds.st_mode:o}")
    if (ss.st_uid, ss.st_gid) != (ds.st_uid, ds.st_gid):
        bad(rel, f"owner {ss.st_uid}:{ss.st_gid} became {ds.st_uid}:{ds.st_gid}")
    if ss.st_mtime_ns != ds.st_mtime_ns: bad(rel, f"mtime {ss.st_mtime_ns} became {ds.st_mtime_ns}")
    links = ss.st_nlink + (1 if rel == b"" and not os.path.exists(os.path.join(src, b"lost+found")) else 0)
    if links != ds.st_nlink: bad(rel, f"{ss.st_nlink} links became {ds.st_nlink}")
    if not stat.S_ISDIR(ss.st_mode):
        if inodes.setdefault(ss.st_ino, ds.st_ino) != ds.st_ino: bad(rel, "hard link to another inode")
    if stat.S_ISREG(ss.st_mode):
        if ss.st_size != ds.st_size: bad(rel, f"size {ss.st_size} became {ds.st_size}")
        elif not same_content(s, d, ss.st_size): bad(rel, "content differs")
        limit = allocated_limit(s, ss.st_size)
        if ds.st_blocks * 512 > limit:
            bad(rel, f"{ds.st_blocks * 512} bytes allocated for {ss.st_size} (at most {limit}): holes filled")
        if ss.st_blocks * 512 < ss.st_size // 4:
            print(f"  sparse {os.fsdecode(rel)}: {ss.st_size} bytes, {ds.st_blocks * 512} allocated in the copy")
    elif stat.S_ISLNK(ss.st_mode):
        if os.readlink(s) != os.readlink(d): bad(rel, f"target {os.readlink(s)!r} became {os.readlink(d)!r}")
    elif stat.S_ISCHR(ss.st_mode) or stat.S_ISBLK(ss.st_mode):
        if ss.st_rdev != ds.st_rdev:
            bad(rel, f"device {os.major(ss.st_rdev)}:{os.minor(ss.st_rdev)} became "
                     f"{os.major(ds.st_rdev)}:{os.minor(ds.st_rdev)}")
    elif stat.S_ISDIR(ss.st_mode):
        names_s = set(os.listdir(s))
        names_d = set(os.listdir(d))
        if rel == b"" and b"lost+found" not in names_s:
            names_d.discard(b"lost+found")  # the image's own
        for n in sorted(names_s - names_d): bad(os.path.join(rel, n), "missing in the copy")
        for n in sorted(names_d - names_s): bad(os.path.join(rel, n), "extra in the copy")
        for n in sorted(names_s & names_d): walk(os.path.join(rel, n))

walk(b"")
print(f"  compared {len(inodes)} non-directory inodes")
for e in errors[:40]:
    print("  DIFF", e)
sys.exit(1 if errors else 0)
PY
}

# --- the grid ----------------------------------------------------------------
declare -A JSIZE=([8M]=2M [100M]=8M [1G]=64M [70G]=128M [3T]=2G)  # internal:SIZE; 2G spans flex groups
EXTERNAL_SIZE=16M
# Mounted and written to: each kind of journal with 1 KiB and 4 KiB blocks.
MOUNT=" 100M/1024/internal 3T/4096/internal:2G 1G/1024/external 70G/4096/external 8M/1024/none 1G/4096/none "
# Populated from the tree, mounted and compared.
POPULATE=" 100M/1024/internal 100M/4096/internal:8M 1G/2048/external 1G/4096/none 70G/4096/internal:128M 3T/4096/external "

echo "== building the tree to populate from"
make_tree "$T/tree"
echo "  $(find "$T/tree" | wc -l) entries"

echo "== grid"
img=$T/fs.img
jimg=$T/j.img
for size in 8M 100M 1G 70G 3T; do
  for bs in 1024 2048 4096; do
    [ "$size" = 3T ] && [ "$bs" != 4096 ] && continue
    for journal_kind in internal internal:SIZE external none; do
      journal=$journal_kind
      case $journal_kind in
        internal:SIZE) journal=internal:${JSIZE[$size]} ;;
        external) journal=external:$jimg:$EXTERNAL_SIZE ;;
      esac
      key=$size/$bs/${journal/:$jimg:$EXTERNAL_SIZE/}
      for populated in no yes; do
        [ "$populated" = yes ] && [[ $POPULATE != *" $key "* ]] && continue
        rm -f "$img" "$jimg"
        args=(mkfs "$img" --size "$size" --block-size "$bs" --journal "$journal")
        if [ "$populated" = yes ]; then args+=(--populate "$T/tree"); fi
        t0=${EPOCHREALTIME/./}
        if ! "$NVJ" "${args[@]}" >"$T/out" 2>&1; then
          # Only what mke2fs cannot make either may be refused.
          [ ! -e "$img" ] && [ ! -e "$jimg" ] || die "nvj ${args[*]} failed and left an image: $(cat "$T/out")"
          if mke2fs_ref "$size" "$bs" "$journal"; then
            die "nvj ${args[*]} refused what mke2fs ${MKE2FS_OPTS[*]} makes: $(cat "$T/out")"
          fi
          rm -f "$T/mke2fs.img"
          echo "  $key populated=$populated: refused, as by mke2fs"
          echo "    nvj:    $(cat "$T/out")"
          echo "    mke2fs: $(grep . "$T/mke2fs.out" | head -n 1)"
          continue
        fi
        t1=${EPOCHREALTIME/./}
        images=$((images + 1))
        check_image "$img" "$size" "$bs" "$journal"
        if [ "$populated" = no ]; then same_as_mke2fs "$img" "$size" "$bs" "$journal"; fi
        what="mkfs $(((t1 - t0) / 1000)) ms, e2fsck clean"
        j=""
        if [[ $journal == external:* ]]; then j=$jimg; fi
        if [ "$populated" = yes ]; then
          grep -q "^from $T/tree: " "$T/out" || die "nvj mkfs --populate printed no counts: $(cat "$T/out")"
          mount_image "$T/mnt" "$img" "$j"
          compare_trees "$T/tree" "$T/mnt" || die "$key: the populated copy differs from the tree"
          unmount_image "$T/mnt"
          fsck_image "$img" "$j"
          what+=", populated copy identical"
        elif [[ $MOUNT == *" $key "* ]]; then
          write_and_check "$img" "$j"
          what+=", kernel mount, write, e2fsck clean"
        fi
        echo "  $size $bs ${journal/$T\//} populated=$populated: $what"
      done
    done
  done
done
rm -f "$img" "$jimg"

echo "== refusals"
# expect_refusal PATTERN ARGS... : nvj mkfs fails with a message matching
# PATTERN and leaves no image behind.
expect_refusal() {
  local pattern=$1; shift
  rm -f "$img" "$jimg"
  if "$NVJ" mkfs "$@" >"$T/out" 2>&1; then die "nvj mkfs $* succeeded"; fi
  grep -Eqi "$pattern" "$T/out" || die "nvj mkfs $*: the message does not match /$pattern/: $(cat "$T/out")"
  [ ! -e "$img" ] || die "nvj mkfs $* failed and left $img behind"
  [ ! -e "$jimg" ] || die "nvj mkfs $* failed and left $jimg behind"
  echo "  $(sed "s|$T/||g" "$T/out")"
}
expect_refusal 'block size' "$img" --size 1T --block-size 1024
mkdir -p "$T/toobig"
head -c $((40 << 20)) /dev/urandom >"$T/toobig/forty"
expect_refusal 'no space|needs .* blocks' "$img" --size 20M --populate "$T/toobig"
expect_refusal 'no space|needs .* blocks' "$img" --size 20M --populate "$T/toobig" --journal "external:$jimg:4M"
expect_refusal 'out of inodes' "$img" --size 8M --block-size 1024 --journal none --populate "$T/tree/many"
expect_refusal 'journal' "$img" --size 100M --journal internal:80M
expect_refusal 'block-size' "$img" --size 100M --block-size 512

echo "== an image that holds data is not formatted over without --force"
head -c $((1 << 20)) /dev/urandom >"$img"
truncate -s 64M "$img"
cp "$img" "$T/before.img"
# keep_data ARGS... : refused, naming --force, and the image is as it was.
keep_data() {
  if "$NVJ" mkfs "$@" >"$T/out" 2>&1; then die "nvj mkfs $* formatted over data"; fi
  grep -q -- "--force" "$T/out" || die "nvj mkfs $*: the message does not mention --force: $(cat "$T/out")"
  cmp "$T/before.img" "$img" || die "nvj mkfs $* failed but changed $img"
  echo "  $(sed "s|$T/||g" "$T/out")"
}
keep_data "$img"
keep_data "$img" --size 64M
keep_data "$img" --size 128M --block-size 4096
"$NVJ" mkfs "$img" --force >/dev/null
fsck_image "$img"
cmp -s -n $((1 << 20)) "$T/before.img" "$img" && die "--force left the old data in place"
# An image nvj made holds data too.
cp "$img" "$T/before.img"
keep_data "$img"
keep_data "$img" --journal none
# An external journal image that holds data: neither file is touched or left.
rm -f "$img"
head -c $((4 << 20)) /dev/urandom >"$jimg"
cp "$jimg" "$T/before-j.img"
if "$NVJ" mkfs "$img" --size 64M --journal "external:$jimg:8M" >"$T/out" 2>&1; then die "formatted over a journal image holding data"; fi
grep -q -- "--force" "$T/out" || die "no mention of --force: $(cat "$T/out")"
cmp "$T/before-j.img" "$jimg" || die "the journal image changed"
[ ! -e "$img" ] || die "the refused mkfs left $img behind"
echo "  $(sed "s|$T/||g" "$T/out")"
rm -f "$jimg"
# A sparse file that holds nothing yet is formatted without --force.
truncate -s 64M "$img"
"$NVJ" mkfs "$img" >/dev/null
fsck_image "$img"
rm -f "$img"

echo "== --label and --uuid"
uuid=0b0e6d0c-0ffe-4c0d-8e0a-123456789abc
"$NVJ" mkfs "$img" --size 256M --label nvj-grid-label --uuid "$uuid" --journal "external:$jimg:8M" >/dev/null
check_image "$img" 256M 1024 "external:$jimg:8M"
SB=$(dumpe2fs -h "$img" 2>/dev/null)
[ "$(field 'Filesystem volume name')" = nvj-grid-label ] || die "label $(field 'Filesystem volume name')"
[ "$(field 'Filesystem UUID')" = "$uuid" ] || die "uuid $(field 'Filesystem UUID')"
rm -f "$img" "$jimg"
expect_refusal 'label' "$img" --size 64M --label 'seventeen bytes!!'
expect_refusal 'uuid' "$img" --size 64M --uuid not-a-uuid

[ ${#_loops[@]} = 0 ] || die "loop devices left attached: ${_loops[*]}"
echo "PASS: $images images, $mounts mounts, $((SECONDS - started)) s"
