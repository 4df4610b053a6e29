#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wait_rules.sh: the clock's rule for its spin window (common/wait_window.h,
# one window per length class, floor 40 us) against the rule it replaced (one
# window, twice the mean lateness, floor 80 us), and the same rule with other
# floors, replayed over the same recorded sleeps of this machine (wait_rules:
# lengths log-uniform from 20 us to 10 ms): how many waits woke past their
# deadline, by how much, and the spinning each rule costs.
#
# Usage: bench/wait_rules.sh [--build DIR] [--sleeps N] [--markdown FILE]
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

build="$repo_dir/build"
sleeps=3000
markdown=""
bench_option --build build text
bench_option --sleeps sleeps count
bench_option --markdown markdown text
bench_parse "$@"
program="$build/bench/wait_rules"
[[ -x $program ]] || bench_fail "$program is missing (ninja -C $build wait_rules)"

out=$("$program" "$sleeps")
echo "$out"
[[ -n $markdown ]] || exit 0
{
  echo "## wait_rules"
  echo
  echo "The clock's spin-window rule against the one it replaced, over the same $sleeps sleeps recorded on this" \
    "machine (lengths log-uniform from 20 us to 10 ms, each to an absolute deadline with 1 ns of timer slack)," \
    "replayed under each rule: a wait no longer than its window spins all of it; a longer one sleeps to its" \
    "deadline minus the window and wakes as late as the recorded sleep did. See docs/timing.md."
  echo
  echo "- Command: \`$command_line\`"
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "- Git commit: $(bench_git_rev)"
  echo
  echo "$out"
} | "$script_dir/lib/results_section.py" wait_rules "$markdown"
