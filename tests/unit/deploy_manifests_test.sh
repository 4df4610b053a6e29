#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# deploy/: the Kubernetes manifests are what the shard rule needs (an
# Indexed Job whose NVJ_SHARD_COUNT equals its completions and whose
# parallelism is no more, each pod writing its own shard folder on the
# volume the merge Job reads), and the Slurm scripts are valid bash that
# pass their options on. The Slurm scripts run on a real cluster in the
# kernel test "slurm"; Kubernetes is not on this machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3 has no yaml module (Debian: python3-yaml)"; exit 77; }
for f in "$top"/deploy/slurm/*.sbatch; do bash -n "$f" || fail "$f is not valid bash"; done
grep -q '^#SBATCH --array=' "$top/deploy/slurm/crash-check.sbatch" || fail "crash-check.sbatch is no job array"
python3 - "$top/deploy/kubernetes" <<'PY' || fail "the Kubernetes manifests"
import sys, yaml
d = sys.argv[1]
check = yaml.safe_load(open(f"{d}/crash-check-job.yaml"))
merge = yaml.safe_load(open(f"{d}/crash-merge-job.yaml"))
spec = check["spec"]
assert check["kind"] == "Job" and spec["completionMode"] == "Indexed", "an Indexed Job"
c = spec["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert int(env["NVJ_SHARD_COUNT"]) == spec["completions"], "NVJ_SHARD_COUNT must equal completions"
assert spec["parallelism"] <= spec["completions"]
script = " ".join(c["args"])
assert "nvj crash check" in script and "shard-$JOB_COMPLETION_INDEX" in script, script
m = merge["spec"]["template"]["spec"]["containers"][0]
assert "nvj crash merge" in " ".join(m["args"]) and "/crash/out/shard-*" in " ".join(m["args"])
claims = {v["persistentVolumeClaim"]["claimName"] for j in (check, merge) for v in j["spec"]["template"]["spec"]["volumes"]}
assert len(claims) == 1, claims
print("manifests: an Indexed Job of", spec["completions"], "shards and its merge, on one claim")
PY
echo PASS
