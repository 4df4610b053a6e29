# SPDX-License-Identifier: BSD-3-Clause
# Debian's packaging flags, as debhelper hands them to CMake: dpkg-buildflags
# with all hardening on (-g -O2 -fstack-protector-strong -D_FORTIFY_SOURCE=2
# -Wformat -Werror=format-security; -z relro -z now), CPPFLAGS folded into
# CFLAGS and CXXFLAGS, since CMake has no CPPFLAGS. Used by ./run's plain
# build and by build_type_test.sh gcc-debian, so both mean the same flags.
#
#   debian_flags SOURCE_DIR   sets DEBIAN_CFLAGS, DEBIAN_CXXFLAGS and
#                             DEBIAN_LDFLAGS (-ffile-prefix-map names SOURCE_DIR)
debian_flags() {
  local src=$1 cppflags
  local -x DEB_BUILD_MAINT_OPTIONS=hardening=+all
  cppflags=$(cd "$src" && dpkg-buildflags --get CPPFLAGS)
  DEBIAN_CFLAGS="$(cd "$src" && dpkg-buildflags --get CFLAGS) $cppflags"
  DEBIAN_CXXFLAGS="$(cd "$src" && dpkg-buildflags --get CXXFLAGS) $cppflags"
  DEBIAN_LDFLAGS=$(cd "$src" && dpkg-buildflags --get LDFLAGS)
}
