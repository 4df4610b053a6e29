# SPDX-License-Identifier: BSD-3-Clause
# The preamble every benchmark script shares: where it is, its options, the
# tools it needs. A script sources this, sets its defaults, declares its
# options and parses them:
#
#   source "$(dirname "$0")/lib/options.sh"   # set -euo pipefail; script_dir, repo_dir
#   runtime=10
#   markdown=""
#   bench_option --runtime runtime count      # VARIABLE and KIND of --runtime
#   bench_option --markdown markdown text
#   bench_parse "$@"                          # sets them, and command_line
#   bench_require nbdkit fio gnuplot:gnuplot-nox   # TOOL[:DEBIAN PACKAGE]
#
# Kinds: count (a positive integer), number (a positive decimal number), text
# (anything not empty). `--name VALUE` and `--name=VALUE` both work; -h and
# --help print the script's "# Usage:" comment (and the indented lines after
# it). Bad input is a usage error (exit 2) naming the option.
#
#   bench_fail MESSAGE...   prints "SCRIPT: MESSAGE" on stderr and exits 1
#   bench_git_rev           the commit of the repository, and whether the
#                           working tree has changes
#   bench_require_clean_tree  fails unless the working tree is the commit it
#                           names (a RESULTS.md section must come from a
#                           committed script, built from a clean tree)
set -euo pipefail

script_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)
bench_name=$(basename "$0")
declare -A _bench_variable=() _bench_kind=()

bench_fail() {
  echo "$bench_name: $*" >&2
  exit 1
}

bench_usage() {
  awk '/^# Usage:/ { on = 1 } on && !/^# (Usage:|  )/ { exit } on { sub(/^# ?/, ""); print }' "$0"
}

bench_usage_error() {
  echo "$bench_name: $*" >&2
  bench_usage >&2
  exit 2
}

bench_option() {  # bench_option --NAME VARIABLE KIND
  case $3 in
    count | number | text) ;;
    *) bench_fail "bench_option $1: unknown kind '$3'" ;;
  esac
  _bench_variable[$1]=$2
  _bench_kind[$1]=$3
}

bench_parse() {
  command_line=$(printf '%q ' "$0" "$@")
  command_line=${command_line% }
  local arg option value
  while [[ $# -gt 0 ]]; do
    arg=$1
    shift
    case $arg in
      -h | --help) bench_usage; exit 0 ;;
      --*=*) option=${arg%%=*} value=${arg#*=} ;;
      *)
        option=$arg
        if [[ -n ${_bench_variable[$option]:-} ]]; then
          [[ $# -gt 0 ]] || bench_usage_error "$option needs a value"
          value=$1
          shift
        fi
        ;;
    esac
    [[ -n ${_bench_variable[$option]:-} ]] || bench_usage_error "unknown argument: $arg"
    case ${_bench_kind[$option]} in
      count) [[ $value =~ ^[1-9][0-9]*$ ]] || bench_usage_error "$option=$value: expected a positive integer" ;;
      number)
        [[ $value =~ ^[0-9]+(\.[0-9]+)?$ && $value =~ [1-9] ]] ||
          bench_usage_error "$option=$value: expected a positive number" ;;
      text) [[ -n $value ]] || bench_usage_error "$option needs a value" ;;
    esac
    printf -v "${_bench_variable[$option]}" '%s' "$value"
  done
}

bench_require() {  # bench_require TOOL[:PACKAGE]...
  local tool name hint
  for tool in "$@"; do
    name=${tool%%:*}
    hint=""
    [[ $tool != *:* ]] || hint=" (apt-get install ${tool#*:})"
    command -v "$name" >/dev/null || bench_fail "$name not found$hint"
  done
}

bench_require_clean_tree() {
  git -C "$repo_dir" rev-parse HEAD >/dev/null 2>&1 || bench_fail "not a git checkout: the results would name no commit"
  [[ -z $(git -C "$repo_dir" status --porcelain --untracked-files=no) ]] ||
    bench_fail "the working tree has uncommitted changes: commit them (a RESULTS.md section comes from a committed script on a clean tree)"
}

bench_git_rev() {
  local rev
  rev=$(git -C "$repo_dir" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return 0; }
  # Changes to tracked files only: an untracked file (a symlink to a build
  # folder, a note) is no part of what was built.
  if [[ -n $(git -C "$repo_dir" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    rev="$rev (working tree has uncommitted changes)"
  fi
  echo "$rev"
}
