#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The build a contributor, an IDE or a packager makes first, exactly as
# they type it, with no flag of the project's:
#
#   cmake -S SOURCE_DIR -B BUILD_DIR -DCMAKE_BUILD_TYPE=TYPE
#   cmake --build BUILD_DIR -j2
#
#   conventional_build_test.sh [--configure-only] TYPE SOURCE_DIR BUILD_DIR
#
# TYPE is a CMake build type (Debug, RelWithDebInfo, ...). Everything is
# built: the product, the tests (NVJ_BUILD_TESTS is on by default), the
# benchmarks, each source alone (no unity build), with the default
# generator and compiler. It fails when cmake cannot configure, when the
# build fails, when a program is missing after it, and when the compiler
# warns: warnings are not errors in this build (they never are by default),
# but every warning the project's flags turn on is one to fix.
#
# With --configure-only it stops after cmake has configured the folder
# (what a build type changes in the configuration, for the CPU of a build:
# the sources are the same in every build type).
#
# Nothing comes from the caller's environment but PATH: CC, CXX and the
# *FLAGS are unset. The folder is kept, so the next run only rebuilds what
# changed; it starts again from scratch when the compiler changes.
set -euo pipefail

configure_only=0
if [ "${1:-}" = --configure-only ]; then configure_only=1; shift; fi
[ $# -eq 3 ] || { echo "usage: $0 [--configure-only] BUILD_TYPE SOURCE_DIR BUILD_DIR" >&2; exit 2; }
type=$1 src=$2 dir=$3
cmake=${CMAKE_COMMAND:-cmake}
unset CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS CMAKE_GENERATOR CMAKE_BUILD_PARALLEL_LEVEL
unset CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER

command -v c++ >/dev/null || { echo "SKIP: no C++ compiler (c++) is installed"; exit 77; }
signature="$type | $(c++ --version | head -n 1) | $("$cmake" --version | head -n 1)"
if [ "$(cat "$dir/configured-with" 2>/dev/null)" != "$signature" ]; then
  rm -rf -- "$dir"
fi
mkdir -p -- "$dir"
# Configured every time, as a contributor runs it again after a pull.
if ! "$cmake" -S "$src" -B "$dir" "-DCMAKE_BUILD_TYPE=$type" >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"
  echo "FAIL: cmake -S SOURCE -B BUILD -DCMAKE_BUILD_TYPE=$type does not configure" >&2
  exit 1
fi
printf '%s\n' "$signature" >"$dir/configured-with"
echo "$type: $signature"
if [ "$configure_only" = 1 ]; then
  grep -q '^CMAKE_BUILD_TYPE:STRING='"$type"'$' "$dir/CMakeCache.txt" ||
    { echo "FAIL: $type: the folder was configured as another build type" >&2; exit 1; }
  [ -f "$dir/Makefile" ] || { echo "FAIL: $type: cmake wrote no Makefile" >&2; exit 1; }
  echo "$type: configured with no flag of the project's (not built: --configure-only)"
  exit 0
fi

# At the lowest CPU priority: beside other tests it takes what they leave.
if ! nice -n 19 "$cmake" --build "$dir" -j2 >"$dir/build.log" 2>&1; then
  grep -v -E '^\[ *[0-9]+%\] |^(Consolidate|Scanning|Generating|Linking)' "$dir/build.log" | tail -n 80
  echo "FAIL: $type: cmake --build failed (full log: $dir/build.log)" >&2
  exit 1
fi
for t in plugins/nbdkit/nbdkit-nvjournal-plugin.so tools/nvj/nvj tools/workloads/nvj-workload \
         tests/unit/unit_tests tests/integration/integration_tests; do
  [ -s "$dir/$t" ] || { echo "FAIL: $type: $dir/$t was not built" >&2; exit 1; }
done
# A warning is shown once, when its source is compiled: a rebuild that
# compiled nothing again has none to show, so a folder that warned, or
# whose compiler changed, starts anew.
if grep -n -E '(^|: )warning: ' "$dir/build.log"; then
  rm -f -- "$dir/configured-with"
  echo "FAIL: $type: the compiler warned (above; full log: $dir/build.log)" >&2
  exit 1
fi
echo "$type: configured with no flag of the project's, built: product, tests and benchmarks, no warning"
