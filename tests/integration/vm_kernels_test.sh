#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Kernels by name: --kernel debian:sid fetches sid's kernel with an apt of
# our own into the cache (never installed, the host's apt untouched), and
# the guest boots it:
#   - nvj kernel fetch debian:sid: its release is the one in its bzImage,
#     its checksum the file's, its packages sid's split ones
#     (linux-binary-V, linux-modules-V, linux-base-V); a second fetch
#     reuses the cache (nothing downloaded);
#   - nvj vm --kernel debian:sid -- uname -r says that release; ext4 (its
#     journal on the second disk) mounts with the modules the guest needs
#     (crc32c is a library there, no module);
#   - nvj crash run --vm --kernel debian:sid: results.json says which
#     kernel made the recording (release, packages, checksum);
#   - --kernel DIR: a kernel a developer built (its bzImage, and its
#     modules where make modules_install puts them) boots too;
#   - the archive out of reach: with nothing cached, exit 2 naming the
#     mirror; with sid cached, the cached kernel, saying so;
#   - bad names: no such suite, no such version, packages without a kernel,
#     "debian:" alone: exit 2, each naming what is wrong;
#   - the host's apt sources, lists and package database are unchanged.
# Skips, saying why, where Debian's archive cannot be reached and the
# cache has no sid kernel.
source "$(dirname "$0")/lib.sh"
require_guest
require_static_workload
[ "$(id -u)" = 0 ] || skip "needs root (the cache in /var/cache, nvj crash run)"

apt_state() {  # what the host's apt reads and keeps, summed
  { find /etc/apt /var/lib/apt/lists -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum; sha256sum /var/lib/dpkg/status; } |
    sha256sum
}
before=$(apt_state)

fetch_kernel debian:sid "$T/sid.json"
python3 - "$T/sid.json" >"$T/sid.vars" <<'PY' || fail "nvj kernel fetch --json: not sid's kernel as expected"
import json, re, subprocess, sys
[k] = json.load(open(sys.argv[1]))
assert k["name"] == "debian:sid" and k["suite"] == "sid", k
# The release in the bzImage's header is the one the kernel says.
head = open(k["image"], "rb").read(0x1000)
assert head[0x202:0x206] == b"HdrS", "not a bzImage"
at = 0x200 + int.from_bytes(head[0x20e:0x210], "little")
with open(k["image"], "rb") as f:
    f.seek(at)
    release = f.read(128).split(b" ")[0].decode()
assert release == k["version"], (release, k["version"])
digest = subprocess.run(["sha256sum", k["image"]], capture_output=True, text=True, check=True).stdout.split()[0]
assert digest == k["image_sha256"], (digest, k["image_sha256"])
names = [p["name"] for p in k["packages"]]
assert names[0] == "linux-image-amd64", names
for part in ("linux-binary-", "linux-modules-", "linux-base-"):
    assert any(n.startswith(part) and n.endswith("-amd64") and n != "linux-base-amd64" for n in names), (part, names)
assert all(re.fullmatch("[0-9a-f]{64}", p["sha256"]) for p in k["packages"]), k["packages"]
assert len({p["version"] for p in k["packages"]}) == 1, k["packages"]
print(f"release={k['version']}")
print(f"image={k['image']}")
print(f"sha={k['image_sha256']}")
PY
# shellcheck source=/dev/null
source "$T/sid.vars"
echo "sid's kernel: $release"
# Reused, not fetched again: no "fetching debian:sid" (another nvj may
# hold the cache's lock, and say so, while it fetches another kernel), and
# the bzImage is the same file, untouched.
image_stat=$(stat -c '%i %Y' "$image")
"$NVJ" kernel fetch debian:sid >"$T/again.out" 2>"$T/again.err" || fail "the second fetch failed: $(cat "$T/again.err")"
! grep -q "fetching debian:sid" "$T/again.err" || fail "the second fetch downloaded again: $(cat "$T/again.err")"
[ "$(stat -c '%i %Y' "$image")" = "$image_stat" ] || fail "the second fetch replaced $image"
grep -q "^debian:sid: $release$" "$T/again.out" || fail "the second fetch names another kernel: $(cat "$T/again.out")"
"$NVJ" kernel list --json >"$T/list.json"
python3 -c "import json,sys; l=json.load(open(sys.argv[1])); assert any(k['version']==sys.argv[2] and k['suite']=='sid' for k in l), l" \
  "$T/list.json" "$release" || fail "nvj kernel list does not list $release from sid"

# The guest on it: its release, ext4 with the journal on /dev/sdb.
"$NVJ" vm --kernel debian:sid -- sh -c 'uname -r; grep " /mnt " /proc/mounts; echo x >/mnt/f && sync && cat /mnt/f' \
  >"$T/vm.log" 2>&1 || { cat "$T/vm.log"; fail "nvj vm --kernel debian:sid failed"; }
cat "$T/vm.log"
grep -qx "$release" "$T/vm.log" || fail "the guest did not say $release"
grep -q "^/dev/sda /mnt ext4 " "$T/vm.log" || fail "the guest did not mount ext4 from /dev/sda"

# A crash run on it: the recording says which kernel made it.
run_crash "$T/run.log" run --vm --kernel debian:sid --out "$T/run" -- sh -c 'echo hello >f && sync'
[ "$STATUS" = 0 ] || fail "nvj crash run --vm --kernel debian:sid exited $STATUS"
grep -q "^== the guest's kernel: $release (debian:sid: linux-binary-" "$T/run.log" || fail "the run does not name its kernel"
check_json crash-results "$T/run/results.json"
python3 - "$T/run/results.json" "$release" "$sha" <<'PY' || fail "results.json does not say which kernel made the recording"
import json, sys
made = json.load(open(sys.argv[1]))["recording"]["made_by"]["guest"]
assert made["kernel"]["version"] == sys.argv[2] and made["kernel"]["image_sha256"] == sys.argv[3], made
assert made["kernel"]["name"] == "debian:sid" and made["transport"] == "scsi", made
PY

# A developer's kernel: a folder with its bzImage and modules_install's tree.
mkdir -p "$T/dev/lib/modules"
cp "$image" "$T/dev/bzImage"
ln -s "$(dirname "$image")" "$T/dev/lib/modules/$release"
"$NVJ" vm --kernel "$T/dev" -- uname -r >"$T/dev.log" 2>&1 || { cat "$T/dev.log"; fail "nvj vm --kernel DIR failed"; }
grep -qx "$release" "$T/dev.log" || fail "the developer's kernel did not say $release: $(cat "$T/dev.log")"

# The archive out of reach.
expect_refusal() {  # expect_refusal WHAT COMMAND...: exit 2, naming WHAT
  local what=$1 status=0; shift
  "$@" >"$T/bad.log" 2>&1 || status=$?
  [ "$status" = 2 ] || { cat "$T/bad.log"; fail "$*: exit $status, not 2"; }
  grep -q -- "$what" "$T/bad.log" || { cat "$T/bad.log"; fail "$*: the message does not name $what"; }
}
expect_refusal "Debian's archive (http://127.0.0.1:9/debian) cannot be reached" \
  env NVJ_KERNEL_CACHE="$T/cache" NVJ_DEBIAN_MIRROR=http://127.0.0.1:9/debian "$NVJ" vm --kernel debian:sid -- true
[ ! -e "$T/cache/kernels" ] || [ -z "$(ls -A "$T/cache/kernels")" ] || fail "a refused fetch left a kernel behind"
# With sid cached (a cache of our own holding the real one's sid kernel),
# the cached kernel, and a word saying so.
real=$(python3 -c "import json,sys; print(next(k['folder'] for k in json.load(open(sys.argv[1])) if k['version']==sys.argv[2] and k['suite']=='sid'))" \
  "$T/list.json" "$release")
mkdir -p "$T/cached/kernels" "$T/cached/suites"
ln -s "$real" "$T/cached/kernels/$(basename "$real")"
echo "{\"kernel\": \"$(basename "$real")\", \"at\": \"2026-01-01T00:00:00Z\"}" >"$T/cached/suites/sid.json"
NVJ_KERNEL_CACHE="$T/cached" NVJ_DEBIAN_MIRROR=http://127.0.0.1:9/debian "$NVJ" kernel fetch debian:sid >"$T/offline.out" 2>"$T/offline.err" ||
  fail "with sid cached and the archive out of reach: $(cat "$T/offline.err")"
grep -q "cannot be reached: .*: using debian:sid as it was on 2026-01-01T00:00:00Z ($release)" "$T/offline.err" ||
  fail "the offline fetch does not say it uses the cached kernel: $(cat "$T/offline.err")"
grep -q "^debian:sid: $release$" "$T/offline.out" || fail "the offline fetch names another kernel"

# nvj kernel list and remove on that cache: a damaged entry is left out of
# the list with a word, hides no other, and goes by its folder's name; a
# name that matches nothing is exit 1.
mkdir "$T/cached/kernels/damaged_1"
echo '{"version":' >"$T/cached/kernels/damaged_1/kernel.json"
NVJ_KERNEL_CACHE="$T/cached" "$NVJ" kernel list >"$T/ls.out" 2>"$T/ls.err" || fail "nvj kernel list with a damaged entry: $(cat "$T/ls.err")"
grep -q "damaged_1/kernel.json: .*; skipped (nvj kernel remove damaged_1)" "$T/ls.err" ||
  fail "nvj kernel list does not name the damaged entry: $(cat "$T/ls.err")"
grep -q "^$release " "$T/ls.out" || fail "the damaged entry hid the good one: $(cat "$T/ls.out")"
status=0
NVJ_KERNEL_CACHE="$T/cached" "$NVJ" kernel remove 0.0-none >"$T/rm.log" 2>&1 || status=$?
[ "$status" = 1 ] || fail "nvj kernel remove of no kernel: exit $status, not 1"
grep -q "no kernel 0.0-none in $T/cached" "$T/rm.log" || fail "nvj kernel remove does not name what matched nothing: $(cat "$T/rm.log")"
NVJ_KERNEL_CACHE="$T/cached" "$NVJ" kernel remove damaged_1 "$release" >"$T/rm.log" 2>&1 || fail "nvj kernel remove: $(cat "$T/rm.log")"
[ -z "$(ls -A "$T/cached/kernels")" ] || fail "nvj kernel remove left $(ls "$T/cached/kernels")"
[ -f "$real/kernel.json" ] || fail "removing the cache's link to the real cache's kernel removed that kernel"

# Bad names.
expect_refusal "has no suite nosuchsuite" "$NVJ" vm --kernel debian:nosuchsuite -- true
expect_refusal "has linux-image-amd64=0.0-0" "$NVJ" crash explore --vm --kernel debian:linux-image-amd64=0.0-0 --out "$T/x"
expect_refusal "hold no kernel image" "$NVJ" kernel fetch debian:linux-base-amd64
expect_refusal "which suite or package" "$NVJ" crash run --vm --kernel debian: --out "$T/x" -- true
expect_refusal "--modules goes with a kernel's file" "$NVJ" vm --kernel debian:sid --modules /lib/modules -- true
[ ! -e "$T/x" ] || fail "a refused run made $T/x"

[ "$(apt_state)" = "$before" ] || fail "the host's apt sources, lists or package database changed"
echo "PASS"
