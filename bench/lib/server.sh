# SPDX-License-Identifier: BSD-3-Clause
# Shared by the benchmark scripts: a scratch folder and one server at a time,
# both gone when the script ends, however it ends. Servers start and stop
# through nbdkit_start and nbdkit_stop (tests/support/nbdkit.sh), as in the
# tests.
#
#   bench_init NAME        make $tmp and install the cleanup traps
#   bench_start COMMAND... run COMMAND (an nbdkit on $tmp/s.sock with pid file
#                          $tmp/s.pid, possibly under valgrind) in the
#                          background until it serves; sets server_pid; its
#                          output goes to $tmp/server.log, shown if it fails
#                          to start (then the script exits 1)
#   bench_stop             SIGTERM it and wait (up to a minute: callgrind
#                          writes its profile on the way out)
#   stop_fio               stop the load started in the background whose pid
#                          is $fio_pid (if any), and wait for it
#   bench_cleanup          stop_fio, bench_stop, and $tmp removed (the EXIT trap)

source "$(dirname "${BASH_SOURCE[0]}")/../../tests/support/nbdkit.sh"

bench_init() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  server_pid=""
  fio_pid=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

stop_fio() {
  if [[ -n ${fio_pid:-} ]]; then
    kill "$fio_pid" 2>/dev/null || true
    wait "$fio_pid" 2>/dev/null || true
    fio_pid=""
  fi
}

bench_cleanup() {
  stop_fio
  bench_stop
  rm -rf "$tmp"
}

bench_start() {
  rm -f "$tmp/s.sock"  # nbdkit leaves its socket file behind
  nbdkit_start "$tmp/s.pid" "$tmp/server.log" "$@" || exit 1
  server_pid=$NBDKIT_PID
}

bench_stop() {
  if [[ -n ${server_pid:-} ]]; then
    local pid=$server_pid status=0
    server_pid=""
    nbdkit_stop "$pid" 60 || status=$?
    [[ $status == 0 ]] || echo "${bench_name:-bench}: the server exited with status $status" >&2
  fi
  return 0
}
