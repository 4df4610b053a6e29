#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build a guest kernel from a Linux source tree, with the fix or without:
#
#   build-kernel.sh SOURCE [PATCH]
#
# SOURCE is an unpacked source tree (Debian's linux-source-7.3 or
# linux-source-6.12 package holds one as a tarball); PATCH, if given, is
# applied first with `patch -p1` (0001-jbd2-...patch beside this script
# for 7.3, 6.12/0001-...patch for 6.12). The configuration is x86_64's
# defconfig with kvm_guest.config, and built in what a guest booted on
# virtio disks needs to mount ext4 with its journal on another disk: no
# modules are installed; btrfs is built in too (F3's 6.12.118 was built
# with this script). Needs build-essential, bc, flex, bison, libelf-dev and
# libssl-dev. The result is SOURCE/arch/x86/boot/bzImage; a
# folder holding it boots in any QEMU (`-kernel`), and nvjournal's
# `nvj vm --kernel SOURCE` takes the folder as it is.
set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 SOURCE [PATCH]" >&2; exit 2; }
src=$1
patch=${2:-}
[ -f "$src/Makefile" ] && [ -d "$src/fs/jbd2" ] || { echo "$0: $src is no Linux source tree" >&2; exit 2; }
if [ -n "$patch" ]; then
  [ -f "$patch" ] || { echo "$0: no patch $patch" >&2; exit 2; }
  patch=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
fi
cd "$src"
if [ -n "$patch" ]; then
  if patch -p1 --dry-run -R -s -f <"$patch" >/dev/null 2>&1; then
    echo "$0: $patch is applied already"
  else
    patch -p1 -s <"$patch"
  fi
fi
make -s defconfig kvm_guest.config
# Built in: virtio's SCSI disks and 9p, ext4 and jbd2, btrfs, loop devices
# and crc32c (metadata_csum); no debug information, which only slows the build.
scripts/config -e SCSI_VIRTIO -e BLK_DEV_SD -e VIRTIO_BLK -e NET_9P -e NET_9P_VIRTIO -e 9P_FS \
  -e EXT4_FS -e JBD2 -e BLK_DEV_LOOP -e BLK_DEV_NBD -e CRYPTO_CRC32C \
  -e BTRFS_FS -e LIBCRC32C -e XOR_BLOCKS -e RAID6_PQ \
  -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
make -s olddefconfig
make -s -j"$(nproc)" bzImage
echo "built $(make -s kernelrelease): $src/arch/x86/boot/bzImage"
