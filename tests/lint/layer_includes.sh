#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layers depend one way (docs/design.md, "Layers"): every project
# header a file includes must belong to a layer its own folder may use.
# Prints each include that breaks the rule as FILE:LINE: and exits 1.
#
# Usage: layer_includes.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"

# folder prefix -> the include prefixes it may use (besides its own folder)
allowed() {
  case "$1" in
    fscore/*) echo "fscore/" ;;
    # The explorer's workloads and oracle, and the fact language: a library
    # of their own (crashlab_explore), fscore alone, which the static
    # workload program links.
    crashlab/explore/*) echo "crashlab/explore/ crashlab/facts/fact.h fscore/" ;;
    crashlab/facts/fact.*) echo "crashlab/facts/fact.h fscore/" ;;
    # The crash lab's logic, pure as fscore is, over fscore's formats.
    crashlab/*) echo "crashlab/ fscore/" ;;
    common/*) echo "common/" ;;
    server/*) echo "server/ fscore/ common/" ;;
    plugins/*) echo "plugins/ server/ fscore/ common/" ;;
    # fscore is pure (no threads, clocks or host files): the static workload
    # program links it for crc32c, and crashlab_explore for the facts'
    # language and the explorer's workloads and oracle (nvj crash explore --vm).
    tools/workloads/*) echo "tools/workloads/ crashlab/explore/ crashlab/facts/fact.h common/ fscore/" ;;
    # The tools reach a running server through its control API, never its
    # internals; nvj mkfs builds images with the server's own filesystem code.
    tools/nvj/*) echo "tools/ server/lab/ server/store/ crashlab/ fscore/ common/" ;;
    *) echo "" ;;  # tests, bench: anything
  esac
}

bad=0
while IFS= read -r file; do
  ok=$(allowed "$file")
  [ -n "$ok" ] || continue
  while IFS=: read -r line include; do
    fine=0
    for prefix in $ok; do
      case "$include" in "$prefix"*) fine=1 ;; esac
    done
    case "$include" in */*) ;; *) fine=1 ;; esac  # a file beside it
    if [ "$fine" = 0 ]; then
      echo "$file:$line: includes \"$include\", outside what ${file%%/*}/ may use ($ok)"
      bad=1
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$file" |
           sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1:\2/')
done < <(find fscore crashlab common server plugins tools -name '*.h' -o -name '*.cpp' | sort)
# Nothing under fscore/ or crashlab/ reaches the host or the clock.
if grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<(thread|mutex|chrono|atomic|condition_variable|future|unistd\.h|fcntl\.h|dirent\.h|sys/socket\.h|sys/stat\.h|time\.h|ctime|fstream)>' fscore crashlab; then
  echo "fscore/ and crashlab/ must stay pure: no threads, clocks, sockets or host files (the includes above)"
  bad=1
fi
if [ "$bad" != 0 ]; then exit 1; fi
echo "layer includes: ok"
