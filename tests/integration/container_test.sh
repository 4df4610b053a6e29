#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The server in a container (docker/): the image built by
# docker/build-image.sh (a Debian root from mmdebstrap, the package
# installed in it with apt) runs nbdkit with the nvjournal plugin under
# rootful podman, its sockets on a bind-mounted volume; this host attaches
# the exports with $NVJ, mounts the ext4 the plugin built (its journal on the
# journal export), writes a file and fsyncs it, unmounts, checks both
# devices with e2fsck, detaches, finds the file in the data export, and
# reads the statistics over the control socket. Then the same server on TCP,
# its port published on 127.0.0.1, attached by nbd://.
#
# The image is tagged for the source tree it is made from
# (build-image.sh --print-tree-tag) and reused while that tree is unchanged;
# else built, with the package cpack makes from NVJ_BUILD_DIR (the build
# tree under test) when set, and the older images of other trees removed.
# NVJ_CONTAINER_IMAGE names an image to use instead.
#
# Skips, saying why, without root, loop devices, FUSE or podman, and when
# podman cannot run a container here (the engine's error). Every container,
# mount, loop device and FUSE mount is taken down on exit, whatever happened.
#
# podman (its builds and each container) makes mount namespaces, each a copy
# of the mounts there are: one made while another test has its filesystem
# mounted holds that filesystem after the test unmounts it, its loop device
# busy (nvj says so and fails, 10 s later). So this test runs in a mount
# namespace of its own, private, without the other tests' loop-backed and
# FUSE mounts (unmounted here, lazily: only the copies go): what podman
# copies then holds nothing of theirs, and their later mounts never reach it.
if [ -z "${NVJ_CONTAINER_OWN_NAMESPACE:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  NVJ_CONTAINER_OWN_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
if [ -n "${NVJ_CONTAINER_OWN_NAMESPACE:-}" ]; then
  findmnt -rn -o TARGET,SOURCE,FSTYPE | awk '$2 ~ /^\/dev\/loop/ || $3 ~ /^fuse/ { print $1 }' | sort -r |
    while read -r target; do umount -l "$(printf '%b' "$target")" 2>/dev/null || true; done
fi
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (rootful podman, loop devices and mounts)"
[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
[ -e /dev/fuse ] || skip "no FUSE (/dev/fuse)"
for c in podman nbdfuse nbdcopy e2fsck dumpe2fs debugfs; do
  command -v "$c" >/dev/null || skip "$c is not installed"
done

build_image=$_source_dir/docker/build-image.sh
image=${NVJ_CONTAINER_IMAGE:-$("$build_image" --print-tree-tag)}
podman_global=()  # podman's own options (--runtime) that make it run here
run_opts=()       # and podman run's
containers=()

# Containers first stopped, after the host let go of their exports: lib.sh's
# cleanup unmounts and detaches, this stops the servers, then lib.sh removes
# the scratch folder.
container_teardown() {
  local status=$? i c
  set +e
  for ((i=${#_mounts[@]}-1; i>=0; i--)); do
    mountpoint -q "${_mounts[i]}" && umount "${_mounts[i]}"
  done
  _mounts=()
  for ((i=${#_attachments[@]}-1; i>=0; i--)); do
    if [ -e "${_attachments[i]}/attach.log" ]; then "$NVJ" detach --state "${_attachments[i]}"; fi
  done
  _attachments=()
  for c in "${containers[@]}"; do
    podman "${podman_global[@]}" rm -f -t 10 "$c" >/dev/null 2>&1
  done
  (exit "$status")
  cleanup
}
trap container_teardown EXIT

# Loop devices, FUSE mounts or nbdfuse processes of this test.
leftovers() {
  losetup -a | grep -F "$T" || true
  grep -F "$T" /proc/self/mountinfo || true
  pgrep -a nbdfuse | grep -F "$T" || true
}

echo "== the image: $image"
start=$SECONDS
if podman image exists "$image"; then
  echo "cached"
else
  [ -z "${NVJ_CONTAINER_IMAGE:-}" ] || fail "NVJ_CONTAINER_IMAGE=$image: podman has no such image"
  deb=()
  if [ -n "${NVJ_BUILD_DIR:-}" ]; then
    # The package of the build under test, as tests/package makes it.
    [ -f "$NVJ_BUILD_DIR/CPackConfig.cmake" ] || fail "NVJ_BUILD_DIR=$NVJ_BUILD_DIR has no CPackConfig.cmake"
    "${CPACK_COMMAND:-cpack}" -G DEB --config "$NVJ_BUILD_DIR/CPackConfig.cmake" -B "$T/deb" >"$T/cpack.log" 2>&1 ||
      { cat "$T/cpack.log"; fail "cpack -G DEB failed"; }
    deb=(--deb "$(ls "$T"/deb/nvjournal_*.deb)")
  fi
  command -v mmdebstrap >/dev/null || podman image exists nvjournal-base:bookworm ||
    skip "mmdebstrap is not installed (to make the base image)"
  status=0
  # Tagged as named above: the tree may change while it builds.
  "$build_image" --engine podman "${deb[@]}" --tag "${image%%-*}" --tag "$image" >"$T/build.log" 2>&1 || status=$?
  if [ "$status" = 3 ]; then
    skip "$(grep 'cannot run a container' "$T/build.log")"
  fi
  [ "$status" = 0 ] || { tail -n 40 "$T/build.log"; fail "docker/build-image.sh failed ($status)"; }
  grep '^build-image.sh:' "$T/build.log"
  podman image exists "$image" || fail "docker/build-image.sh made no $image"
  # The images of other source trees go: one is kept, this tree's.
  podman images --format '{{.Repository}}:{{.Tag}}' | grep -E '^localhost/nvjournal:[0-9.]+-[0-9a-f]{12}$' |
    grep -vxF "localhost/$image" | xargs -r podman rmi >/dev/null 2>&1 || true
fi
echo "image ready in $((SECONDS - start)) s"

echo "== can podman run a container here?"
# Tried as is, then with what each failure asks for: crun (podman's default
# runtime in Debian 12) refuses a hybrid cgroup layout, which runc takes;
# podman run asks for an open-file limit of 1048576 (and, once any --ulimit
# is given, a process limit of 1048576), above the hard limits of a host
# that lacks CAP_SYS_RESOURCE (podman sets its own process limit to 32768):
# both must then be given within them.
hard_nofile=$(ulimit -Hn)
hard_nproc=$(ulimit -Hu)
if [ "$hard_nproc" = unlimited ] || [ "$hard_nproc" -gt 32768 ]; then hard_nproc=32768; fi
tried=()
ran=0
for attempt in 1 2 3; do
  if err=$(podman "${podman_global[@]}" run --rm --network=none "${run_opts[@]}" --entrypoint true "$image" 2>&1); then
    ran=1
    break
  fi
  tried+=("$(echo podman "${podman_global[@]}" run "${run_opts[@]}"): $err")
  case "$err" in
    *"cgroups in hybrid mode not supported"*)
      [ ${#podman_global[@]} = 0 ] && command -v runc >/dev/null || break
      podman_global=(--runtime runc) ;;
    *setrlimit* | *"error setting rlimit"*)
      [ ${#run_opts[@]} = 0 ] || break
      run_opts=(--ulimit "nofile=$hard_nofile:$hard_nofile" --ulimit "nproc=$hard_nproc:$hard_nproc") ;;
    *) break ;;
  esac
done
[ "$ran" = 1 ] || skip "podman cannot run a container here: $(printf '%s; ' "${tried[@]}")"
for t in "${tried[@]}"; do echo "(failed: $t)"; done
echo "runs with: podman ${podman_global[*]} run ${run_opts[*]}"

# The package's programs run in it: nvj (the Kubernetes Jobs' command,
# deploy/) and nbdkit, which finds the plugin by name.
out=$(podman "${podman_global[@]}" run --rm --network=none "${run_opts[@]}" --entrypoint nvj "$image" --version) ||
  fail "nvj --version failed in the image"
[ "$out" = "$("$NVJ" --version)" ] || fail "the image's nvj says '$out', this build's '$("$NVJ" --version)'"
podman "${podman_global[@]}" run --rm --network=none "${run_opts[@]}" --entrypoint nbdkit "$image" nvjournal --dump-plugin >"$T/dump" ||
  fail "nbdkit nvjournal --dump-plugin failed in the image"
grep -qx name=nvjournal "$T/dump" || fail "nbdkit in the image does not load the nvjournal plugin"

# run_server NAME [PODMAN-RUN-OPTION]... -- [ENTRYPOINT-ARG]... : the image
# in a container NAME (unique to this test), its volume /run/nvjournal on
# $T/NAME; returns once nbdkit wrote its pid file there (its sockets
# listen), or fails with the container's log.
run_server() {
  local name=$1 opts=() i
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  local c="nvj-test-$$-$name"
  mkdir "$T/$name"
  containers+=("$c")
  podman "${podman_global[@]}" run -d --name "$c" "${run_opts[@]}" -v "$T/$name:/run/nvjournal" "${opts[@]}" \
    "$image" "$@" >/dev/null || fail "podman run $name failed"
  for ((i = 0; i < 3000; i++)); do
    [ ! -s "$T/$name/nbdkit.pid" ] || return 0
    [ "$(podman "${podman_global[@]}" inspect -f '{{.State.Running}}' "$c")" = true ] || break
    sleep 0.01
  done
  podman "${podman_global[@]}" logs "$c" || true
  fail "nbdkit in container $c is not serving (no pid file in the volume)"
}

# stop_container NAME : podman stop (SIGTERM to nbdkit); fails unless
# nbdkit exited cleanly.
stop_container() {
  local c="nvj-test-$$-$1" code
  podman "${podman_global[@]}" stop -t 10 "$c" >/dev/null || fail "podman stop $c failed"
  code=$(podman "${podman_global[@]}" inspect -f '{{.State.ExitCode}}' "$c")
  [ "$code" = 0 ] || { podman "${podman_global[@]}" logs "$c"; fail "nbdkit in $c exited with $code"; }
  podman "${podman_global[@]}" rm "$c" >/dev/null
}

echo "== the server in a container, its Unix sockets on a volume"
start=$SECONDS
run_server unix --network=none -- data=128M journal=16M
ls -l "$T/unix"
[ -S "$T/unix/nbd.sock" ] && [ -S "$T/unix/control.sock" ] || fail "no sockets in the volume"
attach unix "$T/unix/nbd.sock"
[ "$(blockdev --getsize64 "$DATA_DEV")" = $((128 << 20)) ] || fail "the data device is not 128 MiB"
[ "$(blockdev --getsize64 "$JOURNAL_DEV")" = $((16 << 20)) ] || fail "the journal device is not 16 MiB"
mount_fs "$T/mnt"
head -c 1000000 /dev/urandom >"$T/file"
dd if="$T/file" of="$T/mnt/file" bs=64k conv=fsync status=none
umount "$T/mnt"
fsck_clean || fail "e2fsck: the filesystem on the exports is not clean"
detach unix
[ -z "$(leftovers)" ] || { echo "left behind:"; leftovers; fail "detach left devices behind"; }
# The file is in the export the container serves (read without the kernel).
nbdcopy "nbd+unix:///data?socket=$T/unix/nbd.sock" "$T/data.img"
debugfs -R "dump /file $T/file.back" "$T/data.img" 2>/dev/null
cmp "$T/file" "$T/file.back" || fail "the data export does not hold the file written"

echo "== its statistics over the control socket, from the host"
"$NVJ" stats "$T/unix/control.sock"
"$NVJ" stats --json "$T/unix/control.sock" >"$T/stats.json"
check_json stats "$T/stats.json"
cat >"$T/written.schema.json" <<'EOF'
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "required": ["exports"],
  "properties": {"exports": {
    "required": ["data", "journal"],
    "properties": {
      "data": {"properties": {"ops": {"required": ["write"], "properties": {"write": {
        "properties": {"count": {"minimum": 1}, "bytes": {"minimum": 1000000}}}}}}},
      "journal": {"properties": {"ops": {"required": ["write"], "properties": {"write": {
        "properties": {"count": {"minimum": 1}}}}}}}
    }
  }}
}
EOF
check_json "$T/written.schema.json" "$T/stats.json" || fail "the statistics do not show the writes"
stop_container unix
echo "Unix socket: $((SECONDS - start)) s"

echo "== the server on TCP, its port published on 127.0.0.1"
start=$SECONDS
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_server tcp -p "127.0.0.1:$port:10809" --entrypoint nbdkit -- \
  --foreground -p 10809 -P /run/nvjournal/nbdkit.pid nvjournal data=64M journal=8M
attach tcp "nbd://127.0.0.1:$port"
[ "$(blockdev --getsize64 "$DATA_DEV")" = $((64 << 20)) ] || fail "the data device is not 64 MiB"
mount_fs "$T/mnt"
echo "over TCP" >"$T/mnt/hello"
sync -f "$T/mnt/hello"
umount "$T/mnt"
fsck_clean || fail "e2fsck: the filesystem on the TCP exports is not clean"
detach tcp
[ -z "$(leftovers)" ] || { echo "left behind:"; leftovers; fail "detach left devices behind"; }
stop_container tcp
echo "TCP: $((SECONDS - start)) s"
echo "PASS"
