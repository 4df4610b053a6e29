#!/bin/bash
# nvj crash run end to end on this host: the workload runs in the mounted
# filesystem's root with NVJ_MNT and NVJ_CONTROL set, its facts reach the
# recording, every state is checked, and nothing is left behind (server,
# loop devices, mounts, the run folder).
#   - nvj writers --fsync each with data=journal: no state fails, exit 0;
#   - a script that posts a file fact without the fsync: states fail on that
#     file, exit 1, the recording and results.json kept in --out;
#   - bad input: no workload, a parameter that is no PARAM=VALUE, an --out
#     that holds a recording already: exit 2 or 1, naming what is wrong.
source "$(dirname "$0")/lib.sh"
require_kernel_lab

leftovers() {  # PID of the nvj crash run
  local dir="/run/nvjournal/crash-$1"
  if losetup -a | grep -q "$dir/"; then echo "a loop device is left"; return 1; fi
  if grep -q "$dir/" /proc/self/mountinfo; then echo "a mount is left"; return 1; fi
  if [ -e "$dir" ]; then echo "the run folder is left"; return 1; fi
  if pgrep -f "$dir/" >/dev/null; then echo "a server is left"; return 1; fi
}

# run_crash LOG ARGS... : nvj crash run ARGS in the background (its PID names
# its run folder); sets STATUS.
run_crash() {
  local log=$1; shift
  "$NVJ" crash run "$@" >"$log" 2>&1 &
  local pid=$!
  _servers+=("$pid")
  STATUS=0
  wait "$pid" || STATUS=$?
  _servers=()
  cat "$log"
  leftovers "$pid" || fail "nvj crash run $* left something behind"
}

run_crash "$T/good.log" --out "$T/good" --mount-options data=journal journal=16M data=128M -- \
  "$NVJ" writers --tasks 8 --dirs 2 --chunks 8 --chunk-size 4K --fsync each w
[ "$STATUS" = 0 ] || fail "nvj crash run of nvj writers exited $STATUS"
grep -q "mounting the ext4 the server built .* with data=journal" "$T/good.log" || fail "not mounted with data=journal"
grep -q "data=128M" "$T/good.log" || fail "the parameter given did not replace the default"
tail -n 1 "$T/good.log" | grep -Eq '^[0-9]+ states checked in [0-9.]+ s \([0-9]+ states/s\), 0 failing$' ||
  fail "the last line is not the summary"
[ -s "$T/good/recording.nvjrec" ] || fail "the recording is not in --out"
check_json crash-results "$T/good/results.json"
python3 - "$T/good/results.json" <<'PY' || fail "the writers' facts did not reach the check"
import json, sys
r = json.load(open(sys.argv[1]))
marks = {s["last_mark"] for s in r["states"] if s["last_mark"]}
assert any(m.startswith("fact file w/d") for m in marks), marks
assert r["verdicts"]["failing"] == 0 and r["verdicts"]["checked"] > 200, r["verdicts"]
PY

cat >"$T/liar.sh" <<'EOF2'
#!/bin/sh
# Writes a file and says it is durable without the fsync; in the working
# directory nvj crash run gives it, which must be $NVJ_MNT.
set -e
[ "$(pwd)" = "$NVJ_MNT" ] || { echo "not in NVJ_MNT: $(pwd)"; exit 3; }
printf 'hello' >said-so
"$NVJ" mark fact file said-so size 5 crc32c 9a71bb4c
EOF2
chmod +x "$T/liar.sh"
export NVJ
run_crash "$T/liar.log" --out "$T/liar" --verify failing -- "$T/liar.sh"
[ "$STATUS" = 1 ] || fail "nvj crash run of a lying workload exited $STATUS, not 1"
grep -q "said-so: expected 5 bytes, crc32c 9a71bb4c, found missing" "$T/liar.log" || fail "the broken fact is not named"
tail -n 1 "$T/liar.log" | grep -Eq ' [1-9][0-9]* failing$' || fail "no failing state counted"

status=0
"$NVJ" crash run >"$T/e1" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "which workload" "$T/e1" || fail "no workload: exit $status, $(cat "$T/e1")"
status=0
"$NVJ" crash run data -- true >"$T/e2" 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "'data' is no PARAM=VALUE" "$T/e2" || fail "a bad parameter: exit $status, $(cat "$T/e2")"
status=0
"$NVJ" crash run --out "$T/good" -- true >"$T/e3" 2>&1 || status=$?
[ "$status" = 1 ] && grep -q "recording.nvjrec exists" "$T/e3" || fail "an --out in use: exit $status, $(cat "$T/e3")"
echo "PASS"
