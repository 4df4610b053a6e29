# Shared by the benchmark scripts: a scratch folder and one server at a time,
# both gone when the script ends, however it ends.
#
#   bench_init NAME        make $tmp and install the cleanup traps
#   bench_start COMMAND... run COMMAND (an nbdkit on $tmp/s.sock with pid file
#                          $tmp/s.pid, possibly under valgrind) in the
#                          background until it serves; its output goes to
#                          $tmp/server.log, shown if it fails to start
#   bench_stop             SIGTERM it and wait

bench_init() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  server_pid=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  bench_stop
  rm -rf "$tmp"
}

bench_start() {
  rm -f "$tmp/s.sock" "$tmp/s.pid"
  "$@" >"$tmp/server.log" 2>&1 &
  server_pid=$!
  local _
  for _ in $(seq 600); do
    [[ -s $tmp/s.pid ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "the server did not start:" >&2
  cat "$tmp/server.log" >&2
  exit 1
}

bench_stop() {
  if [[ -n ${server_pid:-} ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
