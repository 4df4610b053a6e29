#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The real Prometheus scrapes the plugin: nbdkit with metrics=127.0.0.1:PORT,
# Prometheus (Debian's prometheus) with a configuration that scrapes it every
# second; load through NBD (nvj bench), then Prometheus' HTTP API must hold
# the series and their values must have moved with the load: the write count
# by at least the writes sent, the bytes likewise, and histogram_quantile()
# over the latency buckets a number. `promtool check metrics` finds nothing
# to say about the text. Requests other than GET /metrics on that port get
# 404 or 405 and change nothing: the exports stay powered, the statistics
# are not reset, the export still serves and Prometheus sees it.
#
# Needs NVJ and NVJ_PLUGIN (ctest sets them), nbdkit, prometheus and
# promtool, curl and python3; no root. About 15 s, 6 of them Prometheus
# waiting for its first scrape (its discovery updates every 5 s).
source "$(dirname "$0")/lib.sh"
for c in nbdkit prometheus promtool curl python3; do
  command -v "$c" >/dev/null || skip "$c is not installed (Debian: prometheus for prometheus and promtool)"
done

# free_port: a TCP port free on 127.0.0.1 now; whoever binds it next retries
# with another if it was taken in between.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- the server ----------------------------------------------------------------
for attempt in 1 2 3 4; do
  mport=$(free_port)
  if try_start_server lab data=64M data-model=none "control=$T/ctl" "metrics=127.0.0.1:$mport" 2>"$T/start.err"; then
    break
  fi
  grep -q "Address already in use" "$T/start.err" && [ "$attempt" -lt 4 ] || { cat "$T/start.err"; fail "nbdkit did not start"; }
done
lab_pid=$SERVER_PID
uri="nbd+unix:///data?socket=$T/lab.sock"

# --- Prometheus ----------------------------------------------------------------
prometheus_ready=""
for attempt in 1 2 3 4; do
  pport=$(free_port)
  cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: nvjournal
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
  prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prometheus.log" 2>&1 &
  prometheus_pid=$!
  _servers+=("$prometheus_pid")
  for ((i = 0; i < 300; i++)); do
    if curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null 2>&1; then prometheus_ready=1; break; fi
    kill -0 "$prometheus_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -z "$prometheus_ready" ] || break
  kill "$prometheus_pid" 2>/dev/null || true
  wait "$prometheus_pid" 2>/dev/null || true
  grep -q "address already in use" "$T/prometheus.log" && [ "$attempt" -lt 4 ] ||
    { cat "$T/prometheus.log"; fail "prometheus was not ready within 30 s"; }
done
echo "nbdkit serves /metrics on 127.0.0.1:$mport, Prometheus listens on 127.0.0.1:$pport"

# query PROMQL: the value of an instant query with one series ("" with none).
query() {
  curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" >"$T/answer.json" ||
    fail "Prometheus refused the query $1"
  python3 - "$T/answer.json" "$1" <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))
if answer.get("status") != "success":
    sys.exit(f"query {sys.argv[2]}: {answer}")
result = answer["data"]["result"]
if len(result) > 1:
    sys.exit(f"query {sys.argv[2]}: {len(result)} series, expected one: {result}")
print(result[0]["value"][1] if result else "")
PY
}

# wait_for PROMQL PYTHON-CONDITION: polls the query (up to 20 s) until its
# value v satisfies the condition; prints the value.
wait_for() {
  local v="" i
  for ((i = 0; i < 100; i++)); do
    v=$(query "$1")
    if [ -n "$v" ] && python3 -c "import sys; v = float(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$v"; then
      echo "$v"; return 0
    fi
    sleep 0.2
  done
  echo "FAIL: $1 is '$v' after 20 s, expected $2" >&2
  return 1
}

# is_number VALUE: a finite number (Prometheus writes NaN and +Inf as such).
is_number() { python3 -c 'import math, sys; sys.exit(0 if math.isfinite(float(sys.argv[1])) else 1)' "$1"; }

writes='nvjournal_requests_total{job="nvjournal",export="data",op="write"}'
wait_for 'up{job="nvjournal"}' 'v == 1' >/dev/null || fail "Prometheus did not scrape 127.0.0.1:$mport"
before=$(wait_for "$writes" 'v >= 0') || fail "no write count stored"
bytes_before=$(query 'nvjournal_bytes_total{export="data",op="write"}')

echo "== load: nvj bench, 4 KiB random writes at depth 8 for 1 s"
"$NVJ" bench --json --duration 1 --depth 8 "$uri" >"$T/bench.json" || fail "nvj bench failed"
sent=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"])' "$T/bench.json")
[ "$sent" -gt 0 ] || fail "nvj bench sent no writes"
after=$(wait_for "$writes" "v >= $before + $sent") || fail "the stored write count did not grow by the $sent writes sent"
bytes_after=$(wait_for 'nvjournal_bytes_total{export="data",op="write"}' "v >= $bytes_before + $sent * 4096") ||
  fail "the stored byte count did not grow by the $((sent * 4096)) bytes sent"
echo "writes sent $sent; stored write count $before -> $after, bytes $bytes_before -> $bytes_after"

# Histograms: every bucket stored, a quantile and a mean from them.
buckets=$(query 'count(nvjournal_latency_seconds_bucket{export="data",op="write"})')
[ "$buckets" = 23 ] || fail "expected 23 le buckets (22 bounds and +Inf) of the data export's writes, Prometheus has '$buckets'"
commit_buckets=$(query 'count(nvjournal_journal_commit_seconds_bucket)')
[ "$commit_buckets" = 23 ] || fail "expected 23 le buckets of the journal's commit time, Prometheus has '$commit_buckets'"
p99=$(query 'histogram_quantile(0.99, sum by (le) (rate(nvjournal_latency_seconds_bucket{export="data",op="write"}[1m])))')
is_number "$p99" || fail "histogram_quantile over the write latency buckets gave '$p99', not a number"
python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) <= 10 else 1)' "$p99" ||
  fail "the p99 write latency $p99 s is outside the buckets (0, 10 s]"
inf=$(query 'nvjournal_latency_seconds_bucket{export="data",op="write",le="+Inf"}')
count=$(query 'nvjournal_latency_seconds_count{export="data",op="write"}')
[ -n "$inf" ] && [ "$inf" = "$count" ] || fail "the +Inf bucket ($inf) is not the count ($count)"
echo "p99 write latency from the stored buckets: $p99 s; +Inf bucket = count = $count"

echo "== promtool check metrics"
curl -sf "http://127.0.0.1:$mport/metrics" >"$T/metrics.txt" || fail "GET /metrics on 127.0.0.1:$mport failed"
promtool check metrics <"$T/metrics.txt" >"$T/promtool.out" 2>&1 || { cat "$T/promtool.out"; fail "promtool check metrics failed"; }
[ ! -s "$T/promtool.out" ] || { cat "$T/promtool.out"; fail "promtool check metrics has remarks"; }

echo "== only GET /metrics on the metrics port"
status() { curl -s -o /dev/null -w '%{http_code}' -X "$1" "http://127.0.0.1:$mport$2"; }
for target in /crash /power-on /reset-stats '/mark?label=x' '/model?export=data&model=hdd'; do
  [ "$(status POST "$target")" = 404 ] || fail "POST $target on the metrics port: expected 404"
done
for target in /stats /journal /; do
  [ "$(status GET "$target")" = 404 ] || fail "GET $target on the metrics port: expected 404"
done
for method in POST PUT DELETE; do
  [ "$(status "$method" /metrics)" = 405 ] || fail "$method /metrics: expected 405"
done
curl -sf --unix-socket "$T/ctl" http://lab/stats >"$T/stats.json" || fail "GET /stats on the control socket failed"
python3 - "$T/stats.json" "$after" <<'PY' || fail "a request to the metrics port changed the server"
import json, sys
stats = json.load(open(sys.argv[1]))
exports = stats["exports"]
problems = [f"{name} is not powered" for name, e in exports.items() if e["powered"] is not True]
if exports["data"]["ops"]["write"]["count"] < float(sys.argv[2]):
    problems.append("the statistics were reset")
if exports["data"]["model"] != "none":
    problems.append(f"the data model changed: {exports['data']['model']}")
if stats["marks"]:
    problems.append(f"a mark was made: {stats['marks']}")
sys.exit("; ".join(problems) if problems else 0)
PY
"$NVJ" bench --json --duration 1 --depth 8 "$uri" >"$T/bench2.json" || fail "the export no longer serves"
more=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"])' "$T/bench2.json")
wait_for "$writes" "v >= $after + $more" >/dev/null || fail "Prometheus did not see the $more writes sent after"

stop_server "$lab_pid"
echo "ok: Prometheus stored the load's $sent writes, the latency histogram and the commit histogram"
