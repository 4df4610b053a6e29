# SPDX-License-Identifier: BSD-3-Clause
# Two builds of nvjournal side by side for a before/after benchmark, each
# from a commit in a git worktree of its own. Sourced after options.sh.
#
#   bench_arm_build DIR ARM REV   nvj, the plugin and nvj-workload at REV
#                                 (their paths are built into nvj): the
#                                 source in DIR/ARM-src, the build in DIR/ARM
#                                 (Release, unity, no tests), its log in
#                                 DIR/ARM.log
#   bench_arm_cleanup DIR         the worktrees of the arms before and after
#                                 removed, and DIR

bench_arm_build() {
  local dir=$1 arm=$2 rev=$3
  echo "$(basename "$0" .sh): building $arm at $rev"
  git -C "$repo_dir" worktree add --detach -q "$dir/$arm-src" "$rev"
  cmake -S "$dir/$arm-src" -B "$dir/$arm" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON \
    -DNVJ_BUILD_TESTS=OFF >/dev/null
  nice ninja -C "$dir/$arm" nvj nbdkit-nvjournal-plugin nvj-workload >"$dir/$arm.log" 2>&1 ||
    { tail -n 20 "$dir/$arm.log"; bench_fail "$arm ($rev) did not build"; }
}

bench_arm_cleanup() {
  local arm
  for arm in before after; do git -C "$repo_dir" worktree remove --force "$1/$arm-src" 2>/dev/null || true; done
  rm -rf "$1"
}
