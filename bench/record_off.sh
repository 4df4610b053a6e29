#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# record_off.sh: what the crash lab's recording costs when no recording runs:
# instructions per 4 KiB random write (bench/nbd_instructions.sh, callgrind)
# of the plugin against the same plugin built from the commit before
# recordings existed (the peer), same build type, measured in the same run.
#
# Usage: bench/record_off.sh [--plugin PATH] [--baseline PATH] [--rounds N]
#                            [--markdown FILE]
#
# --baseline: a plugin built from the commit before recordings (default:
# built here, RelWithDebInfo, from a clone of this repository at that
# commit; a few minutes). The plugin under test should be RelWithDebInfo too.
# nbd_instructions.sh runs for each plugin in turn (--rounds rounds, the
# median); the verdict is on "ours" (statistics on) at depths 1 and 16:
# at most 1% more instructions per write than the baseline.
set -euo pipefail
source "$(dirname "$0")/lib/options.sh"

plugin="$repo_dir/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"
baseline=""
rounds=3
markdown=""
target_percent=1
before_recordings=435f960  # the parent of the commit that added server/record/recorder.cpp

bench_option --plugin plugin text
bench_option --baseline baseline text
bench_option --rounds rounds count
bench_option --markdown markdown text
bench_parse "$@"
[[ -f $plugin ]] || bench_fail "plugin not found: $plugin (build it with ninja -C build)"
[[ -z $baseline || -f $baseline ]] || bench_usage_error "--baseline $baseline: no such file"
plugin=$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")
bench_require nbdkit fio valgrind git cmake ninja

source "$script_dir/lib/server.sh"
bench_init record_off

if [[ -z $baseline ]]; then
  echo "record_off: building the baseline plugin at $before_recordings"
  git clone -q "$repo_dir" "$tmp/base"
  git -C "$tmp/base" checkout -q "$before_recordings"
  cmake -S "$tmp/base" -B "$tmp/base/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVJ_BUILD_TESTS=OFF \
    >"$tmp/base.log" 2>&1 || { cat "$tmp/base.log" >&2; bench_fail "configuring the baseline failed"; }
  nice ninja -C "$tmp/base/build" plugins/nbdkit/nbdkit-nvjournal-plugin.so >>"$tmp/base.log" 2>&1 ||
    { tail -n 30 "$tmp/base.log" >&2; bench_fail "building the baseline failed"; }
  baseline=$tmp/base/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so
fi
baseline=$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")

for which in baseline plugin; do
  echo "record_off: $which"
  "$script_dir/nbd_instructions.sh" --plugin "${!which}" --rounds "$rounds" | tee "$tmp/$which.txt"
done

RO_DIR=$tmp RO_MARKDOWN=$markdown RO_COMMAND=$command_line RO_TARGET=$target_percent RO_BEFORE=$before_recordings \
RO_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') RO_GIT=$(bench_git_rev) RO_PLUGIN=$plugin RO_REPO=$repo_dir \
BENCH_DIR=$script_dir python3 - <<'PY'
import os, re, subprocess
env = os.environ
def ours(which):
    text = open(os.path.join(env["RO_DIR"], which + ".txt")).read()
    return {int(d): int(n) for d, n in re.findall(r"^qd(\d+): ours (\d+) vs memory", text, re.M)}, text
base, _ = ours("baseline")
mine, _ = ours("plugin")
target = float(env["RO_TARGET"])
rows, ok = [], True
print()
for d in sorted(base):
    extra = mine[d] - base[d]
    pct = extra / base[d] * 100
    ok = ok and pct <= target
    rows.append((d, base[d], mine[d], extra, pct))
    print(f"qd{d}: {mine[d]} instructions per write against {base[d]} before recordings: {extra:+d} ({pct:+.2f}%)")
verdict = "PASS" if ok else "FAIL"
print(f"recording off: {verdict} (target: at most {target:g}% more)")
path = env["RO_MARKDOWN"]
if not path:
    raise SystemExit(0)
lines = [
    "## record_off",
    "",
    "What recordings cost when none runs: instructions per 4 KiB random write (bench/nbd_instructions.sh,"
    " callgrind, `ours`: statistics on, no timing model) of this plugin against the plugin built from"
    f" {env['RO_BEFORE']}, the commit before recordings, same build type (RelWithDebInfo), in the same run."
    f" Target: at most {target:g}% more.",
    "",
    f"- Command: `{env['RO_COMMAND']}`",
    f"- Date: {env['RO_DATE']}",
    f"- Git commit: {env['RO_GIT']}",
    f"- Plugin: `{os.path.relpath(env['RO_PLUGIN'], env['RO_REPO'])}`",
    "",
    "| depth | before recordings | this plugin | difference | verdict |",
    "|---:|---:|---:|---:|---|",
]
for d, b, m, extra, pct in rows:
    lines.append(f"| {d} | {b} | {m} | {extra:+d} ({pct:+.2f}%) | {'PASS' if pct <= target else 'FAIL'} |")
section = "\n".join(lines) + "\n"
subprocess.run([os.path.join(env["BENCH_DIR"], "lib", "results_section.py"), "record_off", path],
               input=section, text=True, check=True)
PY
