// SPDX-License-Identifier: BSD-3-Clause
// Which filesystem a device holds, by the magic numbers of its superblock
// (as blkid tells them apart), and whether its journal or log is on another
// device. The crash lab checks ext4 in process and hands XFS and btrfs to
// the kernel: this says which. Pure.
//
//   ext4   0xEF53 (little-endian) at byte 1080 (the superblock at 1024,
//          s_magic at 56 into it); ext2 and ext3 too; its journal is
//          external when it has one (has_journal) and no journal inode
//   xfs    "XFSB" at byte 0; sb_logstart (big-endian, at 48) is 0 when the
//          log is external
//   btrfs  "_BHRfS_M" at byte 65600 (the superblock at 64 KiB, magic at
//          0x40 into it)
#pragma once

#include <cstdint>

#include "fscore/block_io.h"

namespace fscore {

enum class FsKind { unknown, ext4, xfs, btrfs };
const char* to_string(FsKind kind);  // "unknown", "ext4", "xfs", "btrfs"

struct FsSignature {
  FsKind kind = FsKind::unknown;
  bool external_log = false;  // its journal (ext4) or log (xfs) is on another device
  // The bytes the filesystem says its device holds (ext4: s_blocks_count
  // blocks; XFS: sb_dblocks; btrfs: total_bytes); 0 when not told.
  std::uint64_t bytes = 0;
};

// Reads at most the first 65608 bytes of `device`; a device too small for
// a superblock holds none.
FsSignature identify_filesystem(const BlockSource& device);

}  // namespace fscore
