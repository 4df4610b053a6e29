#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the nvjournal server image without a registry: a Debian root made
# by mmdebstrap from a Debian mirror, imported as the base image, and the
# project's Debian package installed in it by docker/Dockerfile. See
# docker/README.md. Run as root from anywhere; --help for the options.
set -euo pipefail

prog=$(basename "$0")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)

usage() {
  cat <<EOF
Usage: $prog [OPTION]...

Builds the nvjournal server image (docker/Dockerfile) with podman or docker,
from a base image made here, without a registry:

 1. the base: a Debian root made by mmdebstrap (the packages from a Debian
    mirror: by default the one this host's apt uses), imported with
    \`ENGINE import\` as BASE; kept, and reused when it exists;
 2. the package: nvjournal_VERSION_ARCH.deb, built from this source tree on
    this host (cmake, ninja, cpack -G DEB, without the tests) unless given;
 3. the image: the package installed into BASE with apt, its dependencies
    from the same mirror, tagged nvjournal:VERSION and nvjournal:VERSION-TREE
    (TREE: a hash of the files the package and the image are made from:
    the top CMakeLists.txt, LICENSE, README.md, cmake/, common/, crashlab/,
    server/, plugins/, tools/, docs/, bench/ and docker/; --print-tree-tag).

Options:
  --engine ENGINE     podman or docker (default: \$CONTAINER_ENGINE, else podman
                      if installed, else docker)
  --runtime NAME      podman's OCI runtime for the build (default: podman's own,
                      but runc when podman's is crun and this host's cgroups are
                      the hybrid layout that crun refuses)
  --base NAME         the base image (default: nvjournal-base:SUITE)
  --rebuild-base      make the base again even if it exists
  --base-only         make the base (if missing or --rebuild-base) and stop
  --suite SUITE       the Debian release of the base (default: bookworm); the
                      package is built on this host, so its release must match
  --variant VARIANT   mmdebstrap's variant: minbase (default) or apt
  --mirror SOURCE     an apt source for mmdebstrap: a mirror's URL or a line
                      "deb URL SUITE COMPONENT..."; repeat for more. Default:
                      this host's apt sources for SUITE, SUITE-updates and
                      SUITE-security, component main (apt-get indextargets)
  --network MODE      the build's network (ENGINE build --network MODE: host,
                      for a docker daemon without a bridge); default: the engine's
  --deb FILE          install this package instead of building one
  --no-recommends     install the package without what it Recommends (fs_mark,
                      gnuplot: the plots of nvj crash merge and the experiments):
                      the server alone, 67 MB smaller; tagged with -minimal
  --build-dir DIR     build the package in DIR and keep it (default: a
                      temporary folder, removed at the end)
  --tag NAME          tag the image NAME instead of the two default tags
                      (repeat for more)
  --print-tree-tag    print the tag for this source tree (nvjournal:VERSION-TREE)
                      and exit
  -h, --help          this text

Environment: CONTAINER_ENGINE (as --engine), TMPDIR (scratch space: the base
tarball is about 170 MB).

Exit status: 0 when the image is built; 2 on a usage error; 3 when the engine
cannot run a container on this host (the engine's error is printed); 1 on
any other failure.
EOF
}

die() { echo "$prog: $*" >&2; exit 1; }
usage_error() { echo "$prog: $*" >&2; echo "Try '$prog --help'." >&2; exit 2; }
note() { echo "$prog: $*" >&2; }

engine=${CONTAINER_ENGINE:-}
runtime=""
suite=bookworm
base=""
rebuild_base=0
base_only=0
variant=minbase
mirrors=()
deb=""
build_dir=""
tags=()
print_tree_tag=0
network=()
recommends=yes
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --engine | --runtime | --base | --suite | --variant | --mirror | --network | --deb | --build-dir | --tag)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case "$1" in
        --engine) engine=$2 ;;
        --runtime) runtime=$2 ;;
        --base) base=$2 ;;
        --suite) suite=$2 ;;
        --variant) variant=$2 ;;
        --mirror) mirrors+=("$2") ;;
        --network) network=(--network "$2") ;;
        --deb) deb=$2 ;;
        --build-dir) build_dir=$2 ;;
        --tag) tags+=("$2") ;;
      esac
      shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --base-only) base_only=1; shift ;;
    --print-tree-tag) print_tree_tag=1; shift ;;
    --no-recommends) recommends=no; shift ;;
    *) usage_error "unknown option '$1'" ;;
  esac
done
case "$variant" in minbase | apt) ;; *) usage_error "--variant: minbase or apt, not '$variant'" ;; esac
[ -n "$base" ] || base="nvjournal-base:$suite"

version=$(sed -n 's/^project(nvjournal VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || die "no project version in $src/CMakeLists.txt"

# What the package and the image are made from (the top CMakeLists.txt and
# the folders it builds, the documents it installs, docker/), hashed with
# the files' names: the tag of an image built from this tree. Not tests/,
# deploy/ or ./run, which the package does not hold.
tree_hash() {
  (
    cd "$src"
    local parts=() p
    for p in CMakeLists.txt LICENSE README.md cmake common crashlab server plugins tools docs bench docker; do
      [ ! -e "$p" ] || parts+=("$p")
    done
    find "${parts[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-12
  )
}
tree_tag="nvjournal:$version-$(tree_hash)"
if [ "$print_tree_tag" = 1 ]; then echo "$tree_tag"; exit 0; fi
if [ ${#tags[@]} = 0 ]; then
  tags=("nvjournal:$version" "$tree_tag")
  [ "$recommends" = yes ] || tags=("nvjournal:$version-minimal" "$tree_tag-minimal")
fi

[ "$(id -u)" = 0 ] || die "run as root: mmdebstrap and a rootful container engine need it"
if [ -z "$engine" ]; then
  if command -v podman >/dev/null; then engine=podman
  elif command -v docker >/dev/null; then engine=docker
  else die "neither podman nor docker is installed (apt-get install podman)"
  fi
fi
case "$engine" in podman | docker) ;; *) usage_error "--engine: podman or docker, not '$engine'" ;; esac
command -v "$engine" >/dev/null || die "$engine is not installed"
[ -z "$deb" ] || [ -f "$deb" ] || die "--deb $deb: no such file"

# podman's global options. crun (Debian 12's default runtime for podman)
# refuses the hybrid cgroup layout, cgroup v1 controllers with a cgroup2
# hierarchy holding controllers too: "cgroups in hybrid mode not supported,
# drop all controllers from cgroupv2". runc runs there.
engine_cmd=("$engine")
if [ "$engine" = podman ]; then
  if [ -z "$runtime" ] && [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ] &&
      [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ] &&
      [ "$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null)" = crun ]; then
    command -v runc >/dev/null ||
      die "podman's runtime is crun, which refuses this host's hybrid cgroups (controllers in /sys/fs/cgroup/unified: $(cat /sys/fs/cgroup/unified/cgroup.controllers)); install runc (apt-get install runc) or give --runtime"
    runtime=runc
    note "crun refuses this host's hybrid cgroups: building with --runtime runc"
  fi
  [ -z "$runtime" ] || engine_cmd+=(--runtime "$runtime")
elif [ -n "$runtime" ]; then
  usage_error "--runtime is for podman (docker's runtime is the daemon's)"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/nvjournal-image-XXXXXX")
cleanup() {
  local status=$?
  set +e
  rm -rf "$scratch"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

image_exists() { "${engine_cmd[@]}" image inspect "$1" >/dev/null 2>&1; }

# The host's apt sources for SUITE, SUITE-updates and SUITE-security
# (component main), as mmdebstrap takes them: "deb URL SUITE main".
host_mirrors() {
  command -v apt-get >/dev/null || return 0
  apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(COMPONENT)' 'Identifier: Packages' |
    awk -v s="$suite" '$1 == "deb" && $4 == "main" && ($3 == s || $3 == s "-updates" || $3 == s "-security") {
      print "deb " $2 " " $3 " main" }' | awk '!seen[$0]++'
}

# 1. The base.
if [ "$rebuild_base" = 1 ] || ! image_exists "$base"; then
  command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"
  if [ ${#mirrors[@]} = 0 ]; then
    mapfile -t mirrors < <(host_mirrors)
    [ ${#mirrors[@]} -gt 0 ] ||
      die "this host's apt sources name no mirror for $suite (component main): give --mirror URL"
  fi
  note "making the base $base: mmdebstrap --variant=$variant $suite from: ${mirrors[*]}"
  start=$SECONDS
  mmdebstrap --variant="$variant" --format=tar "$suite" "$scratch/base.tar" "${mirrors[@]}" >"$scratch/mmdebstrap.log" 2>&1 ||
    { cat "$scratch/mmdebstrap.log" >&2; die "mmdebstrap failed (its output is above)"; }
  "${engine_cmd[@]}" import --change 'CMD ["/bin/bash"]' "$scratch/base.tar" "$base" >"$scratch/import.log" 2>&1 ||
    { cat "$scratch/import.log" >&2; die "$engine import of the base failed"; }
  rm -f "$scratch/base.tar"
  note "base $base made in $((SECONDS - start)) s"
else
  note "reusing the base $base (--rebuild-base makes it again)"
fi

# Can the engine run a build's RUN step here at all? A one-line build on
# the base; its error is the answer when it cannot.
printf 'FROM %s\nRUN true\n' "$base" >"$scratch/Probe"
pull=()
[ "$engine" = docker ] || pull=(--pull=never)  # the base is local; never ask a registry
if ! "${engine_cmd[@]}" build "${pull[@]}" --no-cache -q -f "$scratch/Probe" -t nvjournal-probe:build "$scratch" \
    >"$scratch/probe.log" 2>&1; then
  echo "$prog: $engine cannot run a container (a build's RUN step) on this host: $(grep -v '^STEP\|^-->' "$scratch/probe.log")" >&2
  exit 3
fi
"${engine_cmd[@]}" rmi nvjournal-probe:build >/dev/null 2>&1 || true
[ "$base_only" = 0 ] || exit 0

# 2. The package.
if [ -z "$deb" ]; then
  # shellcheck source=/dev/null
  host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ "$host_codename" = "$suite" ] ||
    die "the package is built on this host ($host_codename), not $suite: build it on $suite and give --deb"
  for c in cmake ninja cpack; do command -v "$c" >/dev/null || die "$c is not installed (to build the package; or give --deb)"; done
  dir=${build_dir:-$scratch/build}
  note "building the package in $dir"
  start=$SECONDS
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVJ_BUILD_TESTS=OFF >"$scratch/cmake.log" 2>&1 ||
    { cat "$scratch/cmake.log" >&2; die "cmake failed"; }
  ninja -C "$dir" >"$scratch/ninja.log" 2>&1 || { tail -n 50 "$scratch/ninja.log" >&2; die "the build failed"; }
  (cd "$dir" && cpack -G DEB) >"$scratch/cpack.log" 2>&1 || { cat "$scratch/cpack.log" >&2; die "cpack -G DEB failed"; }
  deb=$(ls "$dir"/nvjournal_"$version"_*.deb 2>/dev/null | head -n 1 || true)
  [ -n "$deb" ] || die "cpack wrote no nvjournal_${version}_*.deb in $dir"
  note "package $(basename "$deb") built in $((SECONDS - start)) s"
fi
[ "$(dpkg-deb -f "$deb" Package 2>/dev/null)" = nvjournal ] || die "$deb is not the nvjournal package"

# 3. The image: the context is a folder holding the package alone.
mkdir "$scratch/context"
cp "$deb" "$scratch/context/"
tag_args=()
for t in "${tags[@]}"; do tag_args+=(-t "$t"); done
# The images these tags name now: removed after the build if it leaves
# them with no tag (not used by a container), so rebuilds do not pile up.
old_ids=()
for t in "${tags[@]}"; do
  id=$("${engine_cmd[@]}" image inspect -f '{{.Id}}' "$t" 2>/dev/null || true)
  [ -z "$id" ] || old_ids+=("$id")
done
note "building ${tags[*]} on $base"
start=$SECONDS
"${engine_cmd[@]}" build "${pull[@]}" "${network[@]}" --build-arg "BASE=$base" --build-arg "RECOMMENDS=$recommends" -f "$here/Dockerfile" "${tag_args[@]}" "$scratch/context" ||
  die "$engine build failed"
note "image ${tags[*]} built in $((SECONDS - start)) s"
for id in "${old_ids[@]}"; do
  if [ "$("${engine_cmd[@]}" image inspect -f '{{len .RepoTags}}' "$id" 2>/dev/null)" = 0 ]; then
    "${engine_cmd[@]}" rmi "$id" >/dev/null 2>&1 && note "removed the previous image ${id#sha256:}, left without a tag" || true
  fi
done
