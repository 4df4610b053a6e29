#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian package end to end: built from this build tree with cpack (the
# binaries as built, nothing compiled), installed with dpkg, used by name
# (`nbdkit nvjournal`, nvj, nvj-workload, the manual pages, the bash
# completion), then purged: dpkg forgets it and every
# path it installed that was not there before is gone.
#
#   package_test.sh BUILD_DIR VERSION PLUGIN_DIR
#
# It installs into /usr: root only. It never touches an nvjournal installed
# otherwise: it skips when dpkg knows the package or when any file of the
# package is already on the machine. The package is purged on every exit.
set -euo pipefail

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ $# = 3 ] || fail "usage: package_test.sh BUILD_DIR VERSION PLUGIN_DIR"
build=$1 version=$2 plugindir=$3
cpack=${CPACK_COMMAND:-cpack}

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i installs into /usr)"
command -v dpkg >/dev/null || skip "not a Debian system (no dpkg)"
command -v nbdkit >/dev/null || skip "nbdkit is not installed"
[ -f "$build/CPackConfig.cmake" ] || fail "$build/CPackConfig.cmake is missing (configure the build first)"
status=$(dpkg-query -W -f='${db:Status-Abbrev}' nvjournal 2>/dev/null || true)
case "$status" in
  "" | un*) ;;
  *) skip "nvjournal is already known to dpkg (status '$status'): this test installs and purges only its own" ;;
esac

T=$(mktemp -d /tmp/nvj-package-XXXXXX)
installed=0
cleanup() {
  local status=$?
  set +e
  if [ "$installed" = 1 ]; then
    dpkg --purge nvjournal >"$T/purge.log" 2>&1 || { echo "cleanup: dpkg --purge nvjournal failed:"; cat "$T/purge.log"; }
  fi
  rm -rf "$T"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The package, into a folder of its own (the build tree is left as it was).
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$T/out" >"$T/cpack.log" 2>&1 ||
  { cat "$T/cpack.log"; fail "cpack -G DEB failed"; }
deb="$T/out/nvjournal_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { cat "$T/cpack.log"; ls -l "$T/out"; fail "cpack wrote no $(basename "$deb")"; }
dpkg-deb -I "$deb"

# Debian's own checker: no error or warning (copyright-without-copyright-
# notice was one while the project had no licence). Its notes (I:) are
# printed, not failed on.
if command -v lintian >/dev/null; then
  lintian --allow-root --fail-on error,warning --display-info "$deb" >"$T/lintian.log" 2>&1 ||
    { cat "$T/lintian.log"; fail "lintian found errors or warnings in the package"; }
  cat "$T/lintian.log"
else
  echo "lintian is not installed: the package's own checks are not run"
fi
# The copyright file names the licence and has a notice.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/nvjournal/copyright >"$T/copyright"
grep -q '^License: BSD-3-Clause$' "$T/copyright" || fail "the copyright file names no BSD-3-Clause licence"
grep -q '^Copyright: [0-9]' "$T/copyright" || fail "the copyright file has no copyright notice"

# Its control fields: the version, and dependencies from dpkg-shlibdeps
# (libc6) and by hand (nbdkit; libnbd0, which nvj loads on demand).
[ "$(dpkg-deb -f "$deb" Package)" = nvjournal ] || fail "Package is not nvjournal"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is '$(dpkg-deb -f "$deb" Version)', not $version"
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libc6 libnbd0 nbdkit libnbd-bin fuse3; do
  grep -Eq "(^|, )$dep( |,|$)" <<<"$depends" || fail "Depends does not name $dep: $depends"
done

# Its contents: every path under /usr, and the files that make it work.
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e '/^$/d' | sort >"$T/contents"
outside=$(grep -v -e '^/usr$' -e '^/usr/' "$T/contents" || true)
[ -z "$outside" ] || fail "the package installs outside /usr: $outside"
expected=(
  /usr/bin/nvj
  /usr/bin/nvj-workload
  "$plugindir/nbdkit-nvjournal-plugin.so"
  /usr/share/man/man1/nvj.1.gz
  /usr/share/man/man1/nbdkit-nvjournal-plugin.1.gz
  /usr/share/doc/nvjournal/copyright
  /usr/share/doc/nvjournal/README.md
  /usr/share/doc/nvjournal/schemas/stats.schema.json
)
completion=/usr/share/bash-completion/completions/nvj
expected+=("$completion")
for f in "${expected[@]}"; do
  grep -qxF "$f" "$T/contents" || fail "$f is not in the package"
done

# Nothing of it on the machine yet: dpkg would overwrite a file installed by
# hand, and the purge would then remove it.
: >"$T/absent"
while read -r path; do
  if [ -e "$path" ] || [ -L "$path" ]; then
    [ -d "$path" ] && [ ! -L "$path" ] || skip "$path already exists (installed by hand?): the package would replace it"
  else
    echo "$path" >>"$T/absent"
  fi
done <"$T/contents"

installed=1
dpkg -i "$deb" >"$T/install.log" 2>&1 || { cat "$T/install.log"; fail "dpkg -i $(basename "$deb") failed"; }
[ "$(dpkg-query -W -f='${Status}' nvjournal)" = "install ok installed" ] ||
  fail "dpkg-query: nvjournal is '$(dpkg-query -W -f='${Status}' nvjournal)', not installed"

# nbdkit finds the plugin by name, in its plugin folder.
dump=$(nbdkit nvjournal --dump-plugin) || fail "nbdkit nvjournal --dump-plugin failed"
echo "$dump"
for line in "path=$plugindir/nbdkit-nvjournal-plugin.so" name=nvjournal "version=$version" \
    "nvjournal_version=$version"; do
  grep -qxF "$line" <<<"$dump" || fail "nbdkit nvjournal --dump-plugin does not say $line"
done

out=$(/usr/bin/nvj --version) || fail "nvj --version failed"
echo "$out"
grep -qF "$version" <<<"$out" || fail "nvj --version says '$out', without $version"
out=$(/usr/bin/nvj-workload --help) || fail "nvj-workload --help failed"
grep -q '^Usage: nvj-workload' <<<"$out" || fail "nvj-workload --help printed no usage: $out"

for page in nvj nbdkit-nvjournal-plugin; do
  found=$(man -w "$page") || fail "man -w $page found no manual page"
  [ "$found" = "/usr/share/man/man1/$page.1.gz" ] || fail "man -w $page: $found, not the package's page"
  man "$page" >"$T/$page.txt" 2>&1 || { cat "$T/$page.txt"; fail "man $page failed"; }
  grep -q "$page" "$T/$page.txt" || fail "man $page shows a page without its name"
done

# The installed completion, in a bash: registered, and it completes.
registered=$(bash -c "source $completion && complete -p nvj") || fail "sourcing $completion registers no completion for nvj"
echo "$registered"
offered=$(bash -c 'source "$1"; COMP_WORDS=(nvj journal re); COMP_CWORD=2; _nvj; echo "${COMPREPLY[*]}"' bash "$completion")
[ "$offered" = replay ] || fail "the installed completion offers '$offered' for 'nvj journal re', not replay"

# Purge: dpkg forgets the package, and every path it listed that was not
# there before the install is gone.
dpkg -L nvjournal | sed -e '/^\/\.$/d' | sort >"$T/listed"
missing=$(comm -13 "$T/listed" "$T/contents")
[ -z "$missing" ] || fail "dpkg -L nvjournal does not list: $missing"
installed=0
dpkg --purge nvjournal >"$T/purge.log" 2>&1 || { cat "$T/purge.log"; fail "dpkg --purge nvjournal failed"; }
if dpkg-query -W -f='${db:Status-Abbrev}' nvjournal 2>/dev/null | grep -vq '^un'; then
  fail "dpkg still knows nvjournal after the purge: $(dpkg-query -W -f='${Status}' nvjournal)"
fi
left=()
while read -r path; do
  if [ -e "$path" ] || [ -L "$path" ]; then left+=("$path"); fi
done <"$T/absent"
[ ${#left[@]} = 0 ] || fail "left behind after dpkg --purge: ${left[*]}"
echo "installed, used and purged $(wc -l <"$T/listed") paths of $(basename "$deb"); nothing left"
