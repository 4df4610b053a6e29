#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The crash lab's check on a real Slurm: a one-node cluster (munged,
# slurmctld, slurmd, with a configuration, key, state and sockets of this
# test's own, stopped by their PIDs at the end) runs deploy/slurm's job
# array on 4 tasks (and a stepped one, --array=0-6:2) and its merge job;
# the merged verdicts equal an unsharded run's byte for byte, and each state was checked exactly once (the merge
# refuses anything else). The recording comes from nvj crash run.
source "$(dirname "$0")/lib.sh"
require_kernel_lab
for c in munged slurmctld slurmd sbatch sinfo; do
  command -v "$c" >/dev/null || skip "$c is not installed (Debian: slurm-wlm, munge)"
done
top=$(cd "$(dirname "$0")/../.." && pwd)

"$NVJ" crash run --out "$T/run" --verify none -- \
  "$NVJ" writers --tasks 6 --dirs 2 --chunks 6 --chunk-size 4K --fsync each w >"$T/run.log" 2>&1 ||
  { cat "$T/run.log"; fail "nvj crash run failed"; }
rec="$T/run/recording.nvjrec"
"$NVJ" crash check "$rec" --verify none --out "$T/one" >"$T/one.log" || fail "the unsharded check failed: $(cat "$T/one.log")"

# The cluster: this host as its one node, ports that are free now.
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r ctld_port d_port <<<"$ports"
host=$(hostname -s)
mkdir -p "$T/slurm/state" "$T/slurm/spool" "$T/munge"
chmod 711 "$T" "$T/munge"  # munged wants its socket's folders searchable by all
head -c 1024 /dev/urandom >"$T/munge/key"
chmod 400 "$T/munge/key"
cat >"$T/slurm/slurm.conf" <<EOF2
ClusterName=nvjtest
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$T/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool
SlurmctldPidFile=$T/slurm/slurmctld.pid
SlurmdPidFile=$T/slurm/slurmd.pid
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldLogFile=$T/slurm/slurmctld.log
SlurmdLogFile=$T/slurm/slurmd.log
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF2
export SLURM_CONF="$T/slurm/slurm.conf"
munged -F --key-file="$T/munge/key" --socket="$T/munge/sock" --pid-file="$T/munge/pid" \
  --log-file="$T/munge/log" --seed-file="$T/munge/seed" &
_servers+=("$!")
for _ in $(seq 50); do [ -S "$T/munge/sock" ] && break; sleep 0.1; done
[ -S "$T/munge/sock" ] || fail "munged did not start: $(cat "$T/munge/log" 2>/dev/null)"
slurmctld -D -i &
_servers+=("$!")
slurmd -D &
_servers+=("$!")
for _ in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
sinfo -h -o %t | grep -q idle || fail "the node is not idle: $(sinfo 2>&1); $(tail -5 "$T/slurm/slurmctld.log")"

cd "$T"
export NVJ
jid=$(sbatch --parsable --array=0-3 "$top/deploy/slurm/crash-check.sbatch" "$rec" "$T/shards" --verify none)
status=0
timeout 300 sbatch --wait --dependency="afterany:$jid" "$top/deploy/slurm/crash-merge.sbatch" "$T/shards" \
  >"$T/merge-submit.log" 2>&1 || status=$?
cat "$T"/nvj-crash-check-*.out "$T"/nvj-crash-merge-*.out 2>/dev/null || true
[ "$status" = 0 ] || fail "the merge job exited $status"
for i in 0 1 2 3; do
  grep -q "shard $i of 4 (from Slurm)" "$T/nvj-crash-check-${jid}_$i.out" ||
    fail "task $i did not take its shard from Slurm"
done
cmp "$T/one/results.json" "$T/shards/merged/results.json" || fail "the merged shards differ from the unsharded run"
python3 - "$T/shards" <<'PY' || fail "a state was checked by two tasks, or by none"
import json, sys
seen = []
for i in range(4):
    seen += [s["position"] for s in json.load(open(f"{sys.argv[1]}/shard-{i}/results.json"))["states"]]
assert sorted(seen) == list(range(len(seen))), "each state taken exactly once"
assert all(json.load(open(f"{sys.argv[1]}/shard-{i}/results.json"))["states"] for i in range(4)), "a task had nothing"
print(f"{len(seen)} states, each checked by exactly one of 4 tasks")
PY

# A stepped array (task IDs 0, 2, 4, 6): each task finds its shard among
# the IDs, and the merge is the unsharded run again.
jid=$(sbatch --parsable --array=0-6:2 "$top/deploy/slurm/crash-check.sbatch" "$rec" "$T/stepped" --verify none)
status=0
timeout 300 sbatch --wait --dependency="afterany:$jid" "$top/deploy/slurm/crash-merge.sbatch" "$T/stepped" \
  >"$T/stepped-submit.log" 2>&1 || status=$?
[ "$status" = 0 ] || fail "the stepped array's merge job exited $status: $(cat "$T"/nvj-crash-merge-*.out | tail -5)"
for id in 0 2 4 6; do
  grep -q "shard $((id / 2)) of 4 (from Slurm)" "$T/nvj-crash-check-${jid}_$id.out" ||
    fail "task $id of the stepped array did not take shard $((id / 2)) of 4: $(head -3 "$T/nvj-crash-check-${jid}_$id.out")"
done
cmp "$T/one/results.json" "$T/stepped/merged/results.json" || fail "the stepped array's merge differs from the unsharded run"

# The exploration on the same cluster: 4 tasks, their merge, against one
# unsharded exploration of the same workloads.
explore=(--ops write_overwrite,rename_over,link)
"$NVJ" crash explore "${explore[@]}" --out "$T/explore-one" >"$T/explore-one.log" 2>&1 ||
  fail "the unsharded exploration failed: $(tail -5 "$T/explore-one.log")"
jid=$(sbatch --parsable --array=0-3 "$top/deploy/slurm/crash-explore.sbatch" "$T/explored" "${explore[@]}")
status=0
timeout 300 sbatch --wait --dependency="afterany:$jid" "$top/deploy/slurm/crash-merge.sbatch" "$T/explored" \
  >"$T/explore-merge-submit.log" 2>&1 || status=$?
cat "$T"/nvj-crash-explore-*.out 2>/dev/null | grep -v "^==" || true
[ "$status" = 0 ] || fail "the exploration's merge job exited $status"
for i in 0 1 2 3; do
  grep -Eq "^== exploring [0-9]+ of the [0-9]+ workloads of seq-1 \(shard $i/4\)" "$T/nvj-crash-explore-${jid}_$i.out" ||
    fail "explore task $i did not take its shard from Slurm"
done
check_json crash-explore "$T/explored/merged/explore.json"
python3 - "$T/explore-one/explore.json" "$T/explored/merged/explore.json" <<'PY' || fail "the merged exploration differs from the unsharded one"
import json, sys
one, merged = (json.load(open(p)) for p in sys.argv[1:])
for key in ("bound", "ops", "filesystem", "mount_options", "parameters", "workloads_in_bound", "explored", "findings", "rules"):
    assert one[key] == merged[key], (key, one[key], merged[key])
assert merged["shard"] == {"index": 0, "count": 1}
strip = lambda w: (w["ordinal"], w["name"], w["steps"], w["failing"] > 0, w["error"])
assert [strip(w) for w in one["workloads"]] == [strip(w) for w in merged["workloads"]]
assert all(w["states"] > 0 for w in merged["workloads"])
print(f"{merged['explored']} workloads, merged from 4 tasks, as explored in one run")
PY
[ -f "$T/explored/merged/workloads/0/results.json" ] || fail "the merge did not bring the workloads' folders"

# The array run again (as Slurm requeues a task): each task finds its
# shard's plan.json and resumes it, exploring nothing explored already.
status=0
again=$(timeout 300 sbatch --parsable --wait --array=0-3 "$top/deploy/slurm/crash-explore.sbatch" "$T/explored" "${explore[@]}") ||
  status=$?
[ "$status" = 0 ] || fail "the array run again exited $status"
for i in 0 1 2 3; do
  grep -Eq "^== exploring ([0-9]+) of the [0-9]+ workloads of seq-1 \(shard $i/4\), \1 of them explored before$" \
    "$T/nvj-crash-explore-${again}_$i.out" || fail "explore task $i run again did not resume its shard: $(grep '^== exploring' "$T/nvj-crash-explore-${again}_$i.out")"
done

# How long the bound takes on 4 nodes at shard 0's rate, and the array to submit.
NVJ="$NVJ" "$top/deploy/slurm/explore-time.sh" --nodes 4 --rate-from "$T/explored/shard-0/explore.json" "${explore[@]}" \
  >"$T/time.log" || fail "explore-time.sh failed: $(cat "$T/time.log")"
cat "$T/time.log"
python3 - "$T/time.log" "$T/explored/shard-0/explore.json" "$T/explore-one/explore.json" <<'PY' || fail "explore-time.sh's figures"
import json, math, re, sys
lines = open(sys.argv[1]).read().splitlines()
shard, one = (json.load(open(p)) for p in sys.argv[2:])
m = re.match(r"^(\d+) workloads; ([\d.]+) workloads/s on one node", lines[0])
assert m and int(m[1]) == one["workloads_in_bound"], lines[0]
rate = shard["explored"] / shard["seconds"]
assert abs(float(m[2]) - rate) < 0.006, (m[2], rate)
t = re.search(r"--array=0-3 --time=(\d\d):(\d\d):00 deploy/slurm/crash-explore.sbatch OUT --ops", lines[2])
assert t, lines[2]
limit = int(t[1]) * 3600 + int(t[2]) * 60
assert limit == max(600, math.ceil(math.ceil(one["workloads_in_bound"] / 4) / rate * 1.25 / 60) * 60), (limit, rate)
PY
status=0
NVJ="$NVJ" "$top/deploy/slurm/explore-time.sh" --nodes 0 --rate-from "$T/explored/shard-0/explore.json" >"$T/bad.log" 2>&1 ||
  status=$?
[ "$status" = 2 ] || fail "--nodes 0: exit $status, not 2"
grep -q -- "--nodes '0'" "$T/bad.log" || fail "--nodes 0: the error does not name it: $(cat "$T/bad.log")"
echo "PASS"
