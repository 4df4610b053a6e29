#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# nvj vm --transport nbd: the guest's own kernel attaches the exports with
# nbd-client (the command nvj attach runs on a host, from the same code)
# over a guest network that QEMU restricts (restrict=on) to one forward per
# export, each to the server's Unix socket.
#  1. On a server started here: ext4 with its journal on the NVRAM export,
#     mounted through /dev/nbd0 and /dev/nbd1, data=journal; synctest runs
#     there; the guest's queues say what the exports say in their NBD
#     handshake (rotation, write cache, discard, sector size; mq-deadline
#     for the rotating one); the guest has no route but its own network and
#     reaches nothing but the forwards; QEMU is given no other network. After
#     the guest has powered off, the host attaches the exports and e2fsck
#     finds the filesystem clean.
#  2. nvj crash run --vm --transport nbd: a recording made that way, with
#     the facts from the guest, checked: data=journal, writers with an
#     fsync after every chunk, no state fails.
#  3. Bad combinations are usage errors (exit 2) naming what is wrong.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
require_guest
require_static_workload
[ -x /usr/sbin/nbd-client ] || command -v nbd-client >/dev/null || skip "nbd-client is not installed (nbd-client)"

echo "== 1. ext4 on /dev/nbd0, its journal on /dev/nbd1, a workload, the queues, the network, e2fsck"
start_server lab "control=$T/lab.ctl"
# A listener on this host's loopback, which QEMU's unrestricted user network
# would take the guest to (10.0.2.2 is the host there): it must see nobody.
python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1], flush=True)
s.accept(); open(sys.argv[1], "w").write("accepted\n")' "$T/accepted" >"$T/port" &
listener=$!
_servers+=("$listener")
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
port=$(cat "$T/port")
[ -n "$port" ] || fail "the loopback listener did not start"
guest='grep " /mnt " /proc/mounts
for d in nbd0 nbd1; do q=/sys/block/$d/queue
  echo "queue $d $(cat $q/rotational) $(cat $q/write_cache | tr " " -) $(cat $q/discard_max_bytes) $(cat $q/logical_block_size) $(sed -E "s/.*\[([^]]*)\].*/\1/" $q/scheduler)"
done
echo "data $NVJ_DATA_DEV journal $NVJ_JOURNAL_DEV"
ip route | sed "s/^/route /"
nc -w 2 10.0.2.2 '"$port"' </dev/null && echo "reached the host"
nc -w 2 10.0.2.100 10811 </dev/null && echo "reached another forward"
nvj-workload synctest /mnt/spool --processes 4 --passes 10 --fsync-file --fsync-dir'
status=0
"$NVJ" vm -v --transport nbd --socket "$T/lab.sock" --control "$T/lab.ctl" --mount-options data=journal -- \
  sh -c "$guest" >"$T/out" 2>"$T/err" || status=$?
cat "$T/out" "$T/err"
remember_vm_run "$T/err"
[ "$status" = 0 ] || fail "nvj vm --transport nbd: exit $status"
grep -q '^/dev/nbd0 /mnt ext4 .*data=journal' "$T/out" || fail "no ext4 on /dev/nbd0 at /mnt with data=journal"
grep -qx 'data /dev/nbd0 journal /dev/nbd1' "$T/out" || fail "the command was not told the devices"
grep -q '^synctest: 4 processes' "$T/out" || fail "no synctest result"
grep -q 'reached' "$T/out" && fail "the guest reached something besides its forwards"
[ ! -e "$T/accepted" ] || fail "the guest reached this host's loopback (port $port)"
kill "$listener" && wait "$listener" 2>/dev/null || true
[ "$(grep -c '^route ' "$T/out")" = 1 ] && grep -q '^route 10.0.2.0/24 dev eth0' "$T/out" ||
  fail "the guest has a route besides its own network"
# QEMU: a restricted user network with the two forwards, each a chardev on
# the server's socket; no SCSI disk, no drive.
grep -q "restrict=on,ipv6=off,guestfwd=tcp:10.0.2.100:10809-chardev:nvjfwd0,guestfwd=tcp:10.0.2.100:10810-chardev:nvjfwd1" \
  "$T/err" || fail "QEMU's network is not the restricted one with the two forwards"
grep -q "socket,id=nvjfwd0,path=$T/lab.sock" "$T/err" || fail "the forward does not lead to the server's socket"
grep 'QEMU started\|boot 1: ' "$T/err" | grep -q 'virtio-scsi\|-drive' && fail "QEMU was given disks as well"
# The queues say what the NBD handshake says (nvj vm -v prints the export's
# traits as this host's libnbd hears them), and nvj attach's scheduler.
for pair in data:nbd0 journal:nbd1; do
  e=${pair%%:*} d=${pair#*:}
  traits=$(sed -nE "s/^nvj vm: export '$e': (.*), \/dev\/$d in the guest .*/\1/p" "$T/err")
  [ -n "$traits" ] || fail "nvj vm -v did not say what export $e says"
  rot=0 wc=write-through sched=none
  case "$traits" in rotational*) rot=1 sched=mq-deadline ;; esac
  case "$traits" in *write-back*) wc=write-back ;; esac
  sector=$(sed -nE 's/.*sectors ([0-9]+)\/.*/\1/p' <<<"$traits")
  discard='0'
  case "$traits" in *"no trim"*) ;; *) discard='[1-9][0-9]*' ;; esac
  grep -Eq "^queue $d $rot $wc $discard ${sector:-512} $sched\$" "$T/out" ||
    fail "the guest's $d does not say what export $e says ($traits)"
done
grep -qx 'queue nbd0 1 write-back 0 512 mq-deadline' "$T/out" || fail "the hdd export is not a rotating disk with a cache"
grep -qx 'queue nbd1 0 write-through 0 512 none' "$T/out" || fail "the NVRAM export is not write-through"
attach lab "$T/lab.sock"
fsck_clean || fail "e2fsck after the guest's workload"
detach lab || fail "detach"
stop_server "$SERVER_PID"

echo "== 2. nvj crash run --vm --transport nbd: data=journal, fsync each, no state fails"
run_crash "$T/crash.log" run --vm --transport nbd --mount-options data=journal --out "$T/crash" -- \
  nvj-workload writers --tasks 2 --dirs 1 --chunks 4 --chunk-size 16K --rounds 2 --overwrite --fsync each w
[ "$STATUS" = 0 ] || fail "nvj crash run --vm --transport nbd: exit $STATUS, not 0"
grep -Eq "boot 1: [1-9][0-9]* marks from the guest posted" "$T/crash.log" || fail "no marks came from the guest"
tail -n 1 "$T/crash.log" | grep -Eq '^[1-9][0-9]* states checked in .*, 0 failing$' || fail "not every state passed"
check_json crash-results "$T/crash/results.json"
python3 - "$T/crash/results.json" <<'PY' || fail "the recording is not the guest's workload"
import json, sys
r = json.load(open(sys.argv[1]))
after = [s for s in r["states"] if (s["last_mark"] or "").startswith(("fact prefix w/", "fact file w/", "fact rewrite w/"))]
assert len(after) >= 4 and r["verdicts"]["failing"] == 0, (len(after), r["verdicts"])
print(f"{r['verdicts']['checked']} states checked, {len(after)} after the writers' facts, none failing")
PY

echo "== 3. usage errors"
expect_status() {  # expect_status STATUS PATTERN ARGS...
  local want=$1 pattern=$2 status=0; shift 2
  "$NVJ" "$@" >/dev/null 2>"$T/err" || status=$?
  [ "$status" = "$want" ] || { cat "$T/err"; fail "nvj $*: exit $status, expected $want"; }
  grep -q -- "$pattern" "$T/err" || { cat "$T/err"; fail "nvj $*: no '$pattern'"; }
}
(umask 077; printf 'lab:%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$T/lab.psk")
expect_status 2 "--transport=usb: expected scsi or nbd" vm --transport usb -- true
expect_status 2 "--transport nbd with a TLS server (nbds://127.0.0.1:1/): the guest kernel's NBD client does no TLS" \
  vm --transport nbd --socket nbds://127.0.0.1:1/ --tls-psk "$T/lab.psk" -- true
expect_status 2 "--transport nbd with a TCP server (nbd://127.0.0.1:1/)" vm --transport nbd --socket nbd://127.0.0.1:1/ -- true
expect_status 2 "--transport is --vm's" crash run --transport nbd -- true
expect_status 2 "--transport=usb: expected scsi or nbd" crash run --vm --transport usb -- true

echo "== nothing left"
expect_vm_runs_gone 1
echo "PASS"
