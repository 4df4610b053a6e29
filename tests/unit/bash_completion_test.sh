#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj's bash completion, as bash runs it: the script `nvj completion bash`
# prints is sourced into a real bash and its function asked what completes
# the last word of a line, as bash asks it at a Tab. The commands, a nested
# command, options, the choices of an option, files for a file option, and
# nothing after an option whose value is free text.
set -euo pipefail
NVJ=${NVJ:?the nvj program (NVJ=...)}
fail() { echo "FAIL: $*" >&2; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$NVJ" completion bash >"$T/nvj.bash"
mkdir "$T/files" && touch "$T/files/disk.img" "$T/files/dim.txt"

# complete LINE: the words bash would offer for the last word of LINE
# (a trailing space: an empty last word), sorted, on one line.
complete_line() {
  bash -c '
    source "$1"
    read -r -a COMP_WORDS <<<"$2"
    [[ $2 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _nvj
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
  ' bash "$T/nvj.bash" "$1"
}

expect() {  # expect LINE WORDS
  local got
  got=$(complete_line "$1")
  [ "${got% }" = "$2" ] || fail "'$1<Tab>' offers '${got% }', expected '$2'"
  echo "ok: '$1<Tab>' -> $2"
}

expect "nvj at" "attach"
expect "nvj de" "demo detach"
expect "nvj journal " "inspect replay top"
expect "nvj journal replay --t" "--time"
expect "nvj attach --me" "--method"
expect "nvj attach --method " "auto fuse nbd-client"
expect "nvj bench --pattern s" "sequential"
expect "nvj experiment w" "wheeler2007"
expect "nvj experiment morton2001 --p" "--passes"
expect "nvj writers --fsync " "each end none"
expect "nvj vm --kernel $T/files/di" "$T/files/dim.txt $T/files/disk.img"
expect "nvj synctest --processes " ""
expect "nvj help " "attach bench completion crash demo detach experiment help journal kernel mark mkfs stats synctest vm writers"
expect "nvj crash " "check explore export frames image import merge record report run states"
expect "nvj crash explore --b" "--bound"
expect "nvj crash check --verify " "all failing none sample"
grep -q '^complete -o filenames -F _nvj nvj$' "$T/nvj.bash" || fail "the script does not register _nvj for nvj"
echo PASS
