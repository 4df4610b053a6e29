#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/tutorial.md, run as it is written: every "$ " line of its console
# blocks, in order, in one bash from a folder laid out as the repository's
# root (build/tools/nvj/nvj and the plugin where the tutorial names them),
# each command exiting 0 and printing what the tutorial shows after it: the
# same lines in the same order, with numbers (but an "exit status N"),
# 8-digit hex checksums and the width of spaces free to differ, "..." standing for any lines (and a line
# ending in "..." for any rest of a line); a command shown with no output
# prints none. So a change that breaks the tutorial fails here.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
tutorial="$_source_dir/docs/tutorial.md"

# The tutorial's own paths: another run (or a user's) must not be there.
for p in /tmp/lab.sock /tmp/lab.pid /tmp/lab.ctl /tmp/lab.nvjrec /tmp/lab-report /tmp/lab-state /tmp/lab-run \
  /run/nvjournal/attach/lab; do
  [ ! -e "$p" ] || fail "$p exists: is the tutorial running elsewhere? (remove it to run this test)"
done
for m in /mnt/lab /mnt/lab-state; do
  ! mountpoint -q "$m" 2>/dev/null || fail "$m is mounted"
done

# Whatever the tutorial left up when it failed half-way, taken down.
tutorial_cleanup() {
  umount /mnt/lab-state 2>/dev/null || true
  umount /mnt/lab 2>/dev/null || true
  for img in /tmp/lab-state/data.img /tmp/lab-state/journal.img; do
    [ -e "$img" ] || continue
    losetup -j "$img" | cut -d: -f1 | while read -r dev; do losetup -d "$dev" 2>/dev/null || true; done
  done
  [ ! -d /run/nvjournal/attach/lab ] || "$NVJ" detach --name lab >/dev/null 2>&1 || true
  if [ -s /tmp/lab.pid ]; then
    local pid
    pid=$(cat /tmp/lab.pid)
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf /tmp/lab.sock /tmp/lab.pid /tmp/lab.ctl /tmp/lab.nvjrec /tmp/lab.devices /tmp/lab-report /tmp/lab-state \
    /tmp/lab-run
  rmdir /mnt/lab /mnt/lab-state 2>/dev/null || true
}
# (cleanup, lib.sh's, exits with the status it finds in $?.)
trap 'status=$?; tutorial_cleanup; (exit "$status"); cleanup' EXIT

# The repository's root as the tutorial sees it.
root="$T/clone"
mkdir -p "$root/build/tools/nvj" "$root/build/plugins/nbdkit"
ln -s "$NVJ" "$root/build/tools/nvj/nvj"
ln -s "$NVJ_PLUGIN" "$root/build/plugins/nbdkit/nbdkit-nvjournal-plugin.so"

python3 - "$tutorial" "$root" "$T" <<'PY' || fail "the tutorial does not do what it says (above)"
import re, subprocess, sys

tutorial, root, scratch = sys.argv[1:]
steps = []  # (command, expected lines)
block = False
for line in open(tutorial).read().splitlines():
    if line.startswith("```"):
        block = line.strip() == "```console" if not block else False
        continue
    if not block:
        continue
    if line.startswith("$ "):
        steps.append((line[2:], []))
    elif steps:
        steps[-1][1].append(line)
assert len(steps) >= 20, f"only {len(steps)} commands in {tutorial}"

script = ["exec 2>&1"]
for k, (command, _) in enumerate(steps):
    script += [f"printf '\\n@@tutorial-begin {k}@@\\n'", command, f"printf '\\n@@tutorial-end {k} %d@@\\n' $?"]
run = subprocess.run(["bash", "-c", "\n".join(script)], cwd=root, stdout=subprocess.PIPE, timeout=900)
text = run.stdout.decode(errors="replace")
outputs, status = {}, {}
for m in re.finditer(r"\n@@tutorial-begin (\d+)@@\n(.*?)\n@@tutorial-end \1 (\d+)@@\n", text, re.S):
    outputs[int(m.group(1))] = [l for l in m.group(2).split("\n")]
    status[int(m.group(1))] = int(m.group(3))

def norm(line):
    if line.startswith("exit status "):
        return line.strip()  # the one figure that must not differ
    line = re.sub(r"\b[0-9a-f]{8}\b", "H", line)
    line = re.sub(r"[0-9]+", "0", line)
    return " ".join(line.split())

def matches(expected, actual):
    """Expected lines against actual ones: '...' any lines, a line ending '...' any rest."""
    if not expected:
        return not actual
    e = expected[0]
    if e.strip() == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    a, want = norm(actual[0]), norm(e)
    ok = a.startswith(want[:-3].rstrip()) if want.endswith("...") else a == want
    return ok and matches(expected[1:], actual[1:])

bad = 0
for k, (command, expected) in enumerate(steps):
    if k not in outputs:
        print(f"FAIL: '{command}' did not run (the tutorial stopped before it)")
        print(text[-3000:])
        sys.exit(1)
    actual = outputs[k]
    while actual and actual[-1] == "":
        actual.pop()
    while actual and actual[0] == "":
        actual.pop(0)
    if status[k] != 0:
        print(f"FAIL: '{command}' exited {status[k]}:")
        print("\n".join(actual[-30:]))
        bad += 1
        continue
    if not matches(expected, actual):
        print(f"FAIL: '{command}' printed what the tutorial does not show.\n-- the tutorial:")
        print("\n".join(expected) or "(nothing)")
        print("-- the command:")
        print("\n".join(actual[:60]))
        bad += 1
if bad:
    sys.exit(1)
print(f"{len(steps)} commands of the tutorial ran and printed what it shows")
PY
echo "PASS"
