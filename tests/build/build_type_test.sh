#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the product (the plugin, nvj, nvj-workload and the libraries they are
# made of; not the tests or benchmarks) one more way, warnings as errors, in a
# build folder of its own:
#
#   build_type_test.sh CONFIG SOURCE_DIR BUILD_DIR
#
#   gcc-release   GCC, CMAKE_BUILD_TYPE=Release (-O3)
#   gcc-debian    GCC with Debian's packaging flags (dpkg-buildflags with
#                 hardening=+all: -O2 -g -fstack-protector-strong
#                 -D_FORTIFY_SOURCE=2 -Wformat -Werror=format-security,
#                 -Wl,-z,relro -Wl,-z,now), CMAKE_BUILD_TYPE=None as
#                 debhelper configures
#   clang-debug   Clang, CMAKE_BUILD_TYPE=Debug without its -g (Clang's
#                 warnings come from its front end, so its cheapest build
#                 sees them all; debug information would only cost CPU)
#   clang-alone   clang-debug with every source compiled alone, not as a
#                 unity build: each source has the includes it needs
#
# A failed build fails the test with the compiler's messages. The folder is
# kept, so the next run only rebuilds what changed; it starts again from
# scratch when the compiler or the flags change. A compiler the
# configuration needs that is not installed is a skip (exit 77).
#
# ccache only if the caller's environment asks for it:
# CMAKE_C_COMPILER_LAUNCHER / CMAKE_CXX_COMPILER_LAUNCHER (CMake reads them
# when it configures a new build folder). Nothing else comes from the
# caller's environment: CC, CXX and the *FLAGS are the configuration's own.
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 gcc-release|gcc-debian|clang-debug|clang-alone SOURCE_DIR BUILD_DIR" >&2; exit 2; }
config=$1 src=$2 dir=$3
cmake=${CMAKE_COMMAND:-cmake}
targets=(nbdkit-nvjournal-plugin nvj nvj-workload)

skip() { echo "SKIP: $*"; exit 77; }
need() { command -v "$1" >/dev/null || skip "$1 is not installed (the $config build needs it)"; }

unset CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS
# As unity builds (CMAKE_UNITY_BUILD: the sources of a target compiled in
# batches of 8): the same code and warnings for 44% less CPU (gcc-release:
# 5.2 CPU minutes against 9.3; Clang: 131 CPU s against 337). A unity
# build can hide a missing include behind an earlier source of its batch:
# clang-alone compiles every source alone.
unity=ON
if [ "$config" = clang-alone ]; then unity=OFF; fi
args=(-G Ninja -DNVJ_WERROR=ON -DNVJ_BUILD_TESTS=OFF "-DCMAKE_UNITY_BUILD=$unity")
case $config in
  gcc-release)
    need gcc; need g++
    export CC=gcc CXX=g++
    args+=(-DCMAKE_BUILD_TYPE=Release)
    ;;
  gcc-debian)
    need gcc; need g++; need dpkg-buildflags
    export CC=gcc CXX=g++
    source "$(dirname "$0")/debian_flags.sh"
    debian_flags "$src"
    # As debhelper does: in the environment CMake reads when it configures.
    export CFLAGS=$DEBIAN_CFLAGS CXXFLAGS=$DEBIAN_CXXFLAGS LDFLAGS=$DEBIAN_LDFLAGS
    args+=(-DCMAKE_BUILD_TYPE=None)
    ;;
  clang-debug|clang-alone)
    need clang; need clang++
    export CC=clang CXX=clang++
    args+=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 -DCMAKE_CXX_FLAGS_DEBUG=-O0)
    ;;
  *) echo "$0: unknown configuration '$config' (gcc-release, gcc-debian, clang-debug or clang-alone)" >&2; exit 2 ;;
esac

# What the folder was configured with; another compiler or other flags start
# it again from scratch.
signature="$config ${args[*]} | $("$CXX" --version | head -n 1) | CFLAGS=${CFLAGS:-} CXXFLAGS=${CXXFLAGS:-}"
signature+=" LDFLAGS=${LDFLAGS:-} | launcher=${CMAKE_CXX_COMPILER_LAUNCHER:-} ${CMAKE_C_COMPILER_LAUNCHER:-}"
if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$dir/configured-with" 2>/dev/null)" != "$signature" ]; then
  rm -rf -- "$dir"
  mkdir -p -- "$dir"
  if ! "$cmake" -S "$src" -B "$dir" "${args[@]}" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log"
    echo "FAIL: $config: cmake could not configure $dir" >&2
    exit 1
  fi
  printf '%s\n' "$signature" >"$dir/configured-with"
fi
echo "$config: $signature"

# At the lowest CPU priority: beside another test it takes what that test
# leaves. ninja prints a progress line per step; on failure show the rest:
# the failed commands and the compiler's messages.
if ! nice -n 19 ninja -C "$dir" "${targets[@]}" >"$dir/build.log" 2>&1; then
  grep -v -E '^\[[0-9]+/[0-9]+\] ' "$dir/build.log"
  echo "FAIL: $config: the build failed (full log: $dir/build.log)" >&2
  exit 1
fi
for t in plugins/nbdkit/nbdkit-nvjournal-plugin.so tools/nvj/nvj tools/workloads/nvj-workload; do
  [ -s "$dir/$t" ] || { echo "FAIL: $config: $dir/$t was not built" >&2; exit 1; }
done
echo "$config: ${targets[*]} built with warnings as errors"
