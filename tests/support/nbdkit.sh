# SPDX-License-Identifier: BSD-3-Clause
# Starting an nbdkit and waiting until it serves, and stopping it: the one
# way the shell scripts do it. Sourced by the kernel tests
# (tests/integration/lib.sh) and by the benchmark scripts (bench/lib/server.sh).
#
#   nbdkit_start PIDFILE LOG COMMAND...
#       Runs COMMAND in the background, its output in LOG, and waits until
#       PIDFILE is not empty. COMMAND is nbdkit with -P PIDFILE, possibly
#       under a wrapper (valgrind); nbdkit writes the pid file once its
#       sockets listen, so the server then takes connections. Sets
#       NBDKIT_PID to the background process. If the process exits first, or
#       PIDFILE is still empty after NBDKIT_START_SECONDS (default 60: under
#       valgrind nbdkit starts slowly), it prints why and LOG on stderr,
#       stops the process and returns 1.
#
#   nbdkit_stop PID [SECONDS]
#       SIGTERM, then up to SECONDS (default 10) for it to exit, then
#       SIGKILL. Returns its exit status: 0 when nbdkit shut down cleanly.
#       PID must be a child of this shell.

nbdkit_start() {
  local pidfile=$1 log=$2
  shift 2
  rm -f "$pidfile"
  "$@" >"$log" 2>&1 &
  NBDKIT_PID=$!
  local limit=$((${NBDKIT_START_SECONDS:-60} * 100)) i why=""
  for ((i = 0; i < limit; i++)); do
    if [ -s "$pidfile" ]; then return 0; fi
    if ! kill -0 "$NBDKIT_PID" 2>/dev/null; then
      why="exited before it served"
      break
    fi
    sleep 0.01
  done
  [ -n "$why" ] || why="wrote no pid file ($pidfile) within ${NBDKIT_START_SECONDS:-60} s"
  {
    echo "nbdkit $why: $*"
    sed 's/^/  /' "$log"
  } >&2
  nbdkit_stop "$NBDKIT_PID" 2 >/dev/null 2>&1 || true
  return 1
}

nbdkit_stop() {
  local pid=$1 limit=$((${2:-10} * 100)) i status=0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < limit; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.01
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "nbdkit (pid $pid) still running ${2:-10} s after SIGTERM: killed" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || status=$?
  return "$status"
}
