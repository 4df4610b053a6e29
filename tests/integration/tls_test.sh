#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Over TCP, only for those who hold the key: nbdkit serves the lab on the
# loopback address with TLS required and pre-shared keys (nbdkit
# --tls=require --tls-psk=FILE -i 127.0.0.1 -p PORT nvjournal ...).
#  1. Without the key nothing is served, not even the list of exports: a
#     plain client, an nbds client without a key and one with a wrong key
#     are refused; nvj bench and nvj attach fail naming what is missing, and
#     the failed attach leaves nothing behind.
#  2. With the key the exports are listed; nvj bench runs over TLS (the key
#     as --tls-psk or as tls-psk-file= in the URI; an identity of a file
#     with two chosen with --tls-username); nvj attach nbds://... --tls-psk
#     attaches, the ext4 the server built mounts, writers and synctest run
#     on it, e2fsck finds it clean, and detach removes everything.
#  3. The control socket stays a Unix socket of mode 0600: the server listens
#     on TCP on the NBD port only.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
command -v nbdinfo >/dev/null || skip "nbdinfo is not installed (libnbd-bin)"
nbdkit --dump-config | grep -qx 'tls=yes' || skip "this nbdkit was built without TLS"

leftovers() {  # loop devices, FUSE mounts, nbdfuse processes or their nbdkit clients of this test
  losetup -a | grep -F "$T" || true
  grep -F "$T" /proc/self/mountinfo || true
  pgrep -a nbdfuse | grep -F "$T" || true
  pgrep -af 'nbdkit -s --exit-with-parent nbd ' | grep -F "$T" || true
}

# expect_failure WHAT COMMAND... : COMMAND must fail; its output is in $T/out.
expect_failure() {
  local what=$1 status=0
  shift
  "$@" >"$T/out" 2>&1 || status=$?
  sed 's/^/  /' "$T/out"
  [ "$status" != 0 ] || fail "$what: succeeded"
}

# Keys as psktool writes them: USERNAME:HEXKEY, 256 bits, mode 0600.
key() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
umask 077
printf 'alice:%s\nbob:%s\n' "$(key)" "$(key)" >"$T/server.psk"
grep '^alice:' "$T/server.psk" >"$T/alice.psk"
printf 'alice:%s\n' "$(key)" >"$T/wrong.psk"
[ "$(stat -c %a "$T/server.psk")" = 600 ] || fail "the key file is not mode 0600"

start_tls_server lab "$T/server.psk" data=64M journal=8M "control=$T/lab.ctl"
ADDR=127.0.0.1:$SERVER_PORT
echo "nbdkit serves the lab on $ADDR with TLS required"

echo "== 1. without the key nothing is served"
expect_failure "nbdinfo --list over plain NBD" nbdinfo --list "nbd://$ADDR"
if grep -Eqw 'data|journal' "$T/out"; then fail "a client without TLS saw an export's name"; fi
expect_failure "nbdinfo --list over TLS without a key" nbdinfo --list "nbds://$ADDR"
if grep -Eqw 'data|journal' "$T/out"; then fail "a client without a key saw an export's name"; fi
expect_failure "nbdinfo --list with a wrong key" nbdinfo --list "nbds://alice@$ADDR/?tls-psk-file=$T/wrong.psk"
if grep -Eqw 'data|journal' "$T/out"; then fail "a client with a wrong key saw an export's name"; fi

expect_failure "nvj bench over plain NBD" "$NVJ" bench --duration 1 "nbd://$ADDR/data"
grep -q "cannot connect to nbd://$ADDR/data" "$T/out" || fail "nvj bench does not say it could not connect"
expect_failure "nvj bench nbds:// without a key" "$NVJ" bench --duration 1 "nbds://$ADDR/data"
grep -q "asks for TLS but names no key: give the PSK file with --tls-psk FILE" "$T/out" || fail "the missing key is not named"
expect_failure "nvj bench with a key for plain NBD" "$NVJ" bench --duration 1 "nbd://$ADDR/data" --tls-psk "$T/alice.psk"
grep -q "TLS options go with a TLS address" "$T/out" || fail "a key for a plain address is not refused"
expect_failure "nvj bench with two identities" "$NVJ" bench --duration 1 "nbds://$ADDR/data" --tls-psk "$T/server.psk"
grep -q "holds several identities ('alice', 'bob'): choose one with --tls-username" "$T/out" || fail "the identities are not named"

expect_failure "nvj attach nbds:// without a key" "$NVJ" attach --state "$T/nokey.attach" "nbds://$ADDR"
grep -q "asks for TLS but names no key" "$T/out" || fail "nvj attach does not name the missing key"
expect_failure "nvj attach with a wrong key" "$NVJ" attach --state "$T/wrong.attach" "nbds://$ADDR" --tls-psk "$T/wrong.psk"
grep -q "cannot connect to nbds://$ADDR (TLS as 'alice' with the key in $T/wrong.psk)" "$T/out" ||
  fail "the failed TLS connection is not named"
if grep -Eqw 'data|journal' "$T/out"; then fail "nvj attach with a wrong key saw an export's name"; fi
[ -z "$(leftovers)" ] || { leftovers; fail "the refused attach left devices behind"; }
[ ! -e "$T/wrong.attach/attach.log" ] || fail "the refused attach left its state"

echo "== 2. with the key"
nbdinfo --list "nbds://alice@$ADDR/?tls-psk-file=$T/alice.psk" >"$T/list"
cat "$T/list"
grep -q '^export="data":' "$T/list" || fail "the data export is not listed to a client with the key"
grep -q '^export="journal":' "$T/list" || fail "the journal export is not listed to a client with the key"

# Reads only: the ext4 the server built is mounted below.
"$NVJ" bench --duration 1 --depth 4 --write-percent 0 --json "nbds://$ADDR/journal" --tls-psk "$T/alice.psk" >"$T/bench.json"
cat "$T/bench.json"
check_json bench "$T/bench.json"
python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["requests"] > 0 else 1)' "$T/bench.json" ||
  fail "nvj bench over TLS completed no request"
"$NVJ" bench --duration 1 --write-percent 0 "nbds://$ADDR/data?tls-psk-file=$T/server.psk" --tls-username bob | tee "$T/bench.txt"
grep -Eq '^  requests [1-9][0-9]*, ' "$T/bench.txt" || fail "nvj bench as bob (the key in the URI) reports no requests"

attach net "nbds://$ADDR" --tls-psk "$T/alice.psk"
# nbdfuse runs nbdkit's nbd plugin as its TLS client: they get the key
# file's name, never the key.
alice_key=$(cut -d: -f2 "$T/alice.psk")
clients=$(pgrep -af "tls-psk=$T/alice.psk" || true)
echo "$clients"
[ "$(grep -c '^[0-9]* nbdfuse ' <<<"$clients")" = 2 ] || fail "not one nbdfuse per export with the key file"
[ "$(grep -c '^[0-9]* nbdkit -s ' <<<"$clients")" = 2 ] || fail "not one nbdkit client per export with the key file"
[[ $clients != *"$alice_key"* ]] || fail "the key is on a command line"
mount_fs "$T/m"
W=(writers "$T/m/w" --tasks 16 --dirs 4 --chunks 20 --fsync each)
"$NVJ" "${W[@]}"
"$NVJ" "${W[@]}" --verify | tee "$T/verify"
grep -q 'every chunk is there' "$T/verify" || fail "writers --verify over TLS"
"$NVJ" synctest "$T/m/spool" --processes 4 --passes 10 --fsync-file --fsync-dir | tee "$T/synctest"
grep -q '^synctest: 4 processes' "$T/synctest" || fail "no synctest result"
umount "$T/m"
fsck_clean || fail "e2fsck after the workloads over TLS"
detach net
[ -z "$(leftovers)" ] || { leftovers; fail "detach left devices behind"; }

echo "== 3. the control socket: Unix, mode 0600; TCP serves NBD only"
[ -S "$T/lab.ctl" ] || fail "the control socket is not a Unix socket"
[ "$(stat -c %a "$T/lab.ctl")" = 600 ] || fail "the control socket has mode $(stat -c %a "$T/lab.ctl")"
curl -sf --unix-socket "$T/lab.ctl" http://lab/stats >/dev/null || fail "the control socket does not answer"
inodes=" $(find "/proc/$SERVER_PID/fd" -lname 'socket:*' -printf '%l ' | tr -dc '0-9 ') "
ports=()
while read -r local_address state inode; do
  [ "$state" = 0A ] || continue  # listening
  case "$inodes" in *" $inode "*) ports+=($((16#${local_address##*:}))) ;; esac
done < <(awk 'FNR > 1 { print $2, $4, $10 }' /proc/net/tcp /proc/net/tcp6)
echo "nbdkit listens on TCP port(s): ${ports[*]}"
[ "${ports[*]}" = "$SERVER_PORT" ] || fail "nbdkit listens on TCP ports '${ports[*]}', expected only $SERVER_PORT"

stop_server "$SERVER_PID"
echo "PASS"
