#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The JSON Schemas in docs/schemas and their validator: every schema is a
# valid schema; the results.json files committed under docs/experiments
# match their experiment's schema; documents that break a schema (a field
# missing, one too many, a wrong type, a value out of range, a rule between
# fields) are refused with exit 1 naming the file and the JSON path; bad
# use of the validator is exit 2.
#
# Needs python3 with the jsonschema module (Debian: python3-jsonschema).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
schemas=$top/docs/schemas
validate=$top/tests/support/validate_json.py
T=$(mktemp -d /tmp/nvj-schemas-XXXXXX)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
# Debian's interpreter, which python3-jsonschema serves (another python3 may
# come first on PATH); the validator's own first line names it too.
python=/usr/bin/python3
"$python" -c 'import jsonschema' 2>/dev/null || { echo "SKIP: $python has no jsonschema module (Debian: python3-jsonschema)"; exit 77; }

# Every schema is valid under the draft it names.
count=0
for s in "$schemas"/*.schema.json; do
  "$python" - "$s" <<'PY' || fail "$s is not a valid JSON Schema"
import json, sys
from jsonschema import validators, Draft202012Validator
schema = json.load(open(sys.argv[1]))
validators.validator_for(schema, default=Draft202012Validator).check_schema(schema)
PY
  count=$((count + 1))
done
[ "$count" -ge 8 ] || fail "only $count schemas in docs/schemas"
echo "$count schemas are valid schemas"

# The committed results match their experiment's schema.
checked=0
for dir in "$top"/docs/experiments/*; do
  name=$(basename "$dir")
  experiment=${name%-quick}
  [ -f "$dir/results.json" ] || continue
  [ -f "$schemas/$experiment.results.schema.json" ] || fail "no schema for docs/experiments/$name/results.json"
  "$validate" "$schemas/$experiment.results.schema.json" "$dir/results.json" ||
    fail "docs/experiments/$name/results.json does not match $experiment.results.schema.json"
  checked=$((checked + 1))
done
[ "$checked" -ge 4 ] || fail "only $checked committed results.json files found"
echo "$checked committed results.json files match their schemas"

# refused SCHEMA FILE PATH MESSAGE PYTHON : FILE changed by PYTHON (over d,
# the parsed document) is refused (exit 1) with "PATH: ...MESSAGE".
refused() {
  local schema=$1 file=$2 path=$3 message=$4 change=$5 status=0
  python3 - "$file" "$T/wrong.json" "$change" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
  "$validate" "$schemas/$schema" "$T/wrong.json" >"$T/out" 2>&1 || status=$?
  [ "$status" = 1 ] || { cat "$T/out"; fail "$schema accepted: $change (exit $status)"; }
  grep -qF -- "$T/wrong.json: at $path: " "$T/out" || { cat "$T/out"; fail "$schema, $change: no error at $path"; }
  grep -qF -- "$message" "$T/out" || { cat "$T/out"; fail "$schema, $change: no '$message'"; }
}
m=$top/docs/experiments/morton2001-quick/results.json
w=$top/docs/experiments/wheeler2007/results.json
e=$top/docs/experiments/enospc2015/results.json
refused morton2001.results.schema.json "$m" '$.runs[1].synctest' "'failure' is a required property" \
  'del d["runs"][1]["synctest"]["failure"]'
refused morton2001.results.schema.json "$m" '$.runs[0].transactions' "is not of type 'integer'" \
  'd["runs"][0]["transactions"] = str(d["runs"][0]["transactions"])'
refused morton2001.results.schema.json "$m" '$.runs[0].synctest.fsync_file.p99_us' "-1 is less than the minimum of 0" \
  'd["runs"][0]["synctest"]["fsync_file"]["p99_us"] = -1'
refused morton2001.results.schema.json "$m" '$.runs[0].device_time_s' "Additional properties are not allowed ('queued' was unexpected)" \
  'd["runs"][0]["device_time_s"]["queued"] = 0'
refused morton2001.results.schema.json "$m" '$.experiment' "'morton2001' was expected" 'd["experiment"] = "wheeler2007"'
refused wheeler2007.results.schema.json "$w" '$.lines[3].points[2].transactions' "2.5 is not of type 'integer'" \
  'd["lines"][3]["points"][2]["transactions"] = 2.5'
refused wheeler2007.results.schema.json "$w" '$.lines[0].journal_model' "'nvme' is not one of" \
  'd["lines"][0]["journal_model"] = "nvme"'
refused enospc2015.results.schema.json "$e" '$.runs[2]' "'copies' is a required property" 'del d["runs"][2]["copies"]'
refused enospc2015.results.schema.json "$e" '$.runs[1].fill' "1.5 is greater than the maximum of 1" 'd["runs"][1]["fill"] = 1.5'
refused enospc2015.results.schema.json "$e" '$.runs[0].fsck_clean' "None is not of type 'boolean'" \
  'd["runs"][0]["fsck_clean"] = None'
echo "documents that break the schemas are refused, naming the path"

# Text that is not JSON (NaN included) is refused too, naming the file; a
# good file next to a bad one does not hide it.
printf '{"experiment":"enospc2015","quick":false,"runs":[' >"$T/cut.json"
status=0; "$validate" "$schemas/enospc2015.results.schema.json" "$e" "$T/cut.json" >"$T/out" 2>&1 || status=$?
[ "$status" = 1 ] && grep -qF "$T/cut.json: not JSON: " "$T/out" || { cat "$T/out"; fail "a cut file was accepted"; }
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["runs"][0]["seconds"] = float("nan"); json.dump(d, open(sys.argv[2], "w"))' \
  "$e" "$T/nan.json"
status=0; "$validate" "$schemas/enospc2015.results.schema.json" "$T/nan.json" >"$T/out" 2>&1 || status=$?
[ "$status" = 1 ] && grep -qF "$T/nan.json: not JSON: NaN is not JSON" "$T/out" || { cat "$T/out"; fail "NaN was accepted"; }

# JSON Lines: each line its own document, a bad one named by its line.
{ head -c -1 "$e"; echo; echo '{"experiment":"enospc2015","quick":0,"runs":[]}'; } >"$T/lines.jsonl"
status=0; "$validate" --lines "$schemas/enospc2015.results.schema.json" "$T/lines.jsonl" >"$T/out" 2>&1 || status=$?
[ "$status" = 1 ] && grep -qF "$T/lines.jsonl:2: at \$.quick: 0 is not of type 'boolean'" "$T/out" ||
  { cat "$T/out"; fail "--lines did not name line 2"; }

# Usage errors: exit 2.
usage() {  # usage MESSAGE ARGS...
  local message=$1 status=0; shift
  "$validate" "$@" >"$T/out" 2>&1 || status=$?
  [ "$status" = 2 ] && grep -qF -- "$message" "$T/out" || { cat "$T/out"; fail "validate_json.py $*: exit $status"; }
}
usage "a schema and at least one file are needed"
usage "a schema and at least one file are needed" "$schemas/bench.schema.json"
usage "unknown option --strict" --strict "$schemas/bench.schema.json" "$e"
usage "cannot read schema $T/none.json" "$T/none.json" "$e"
echo '{"type": "objekt"}' >"$T/bad.schema.json"
usage "schema $T/bad.schema.json is not a valid schema" "$T/bad.schema.json" "$e"
echo "the validator's usage errors exit 2"
echo "PASS"
