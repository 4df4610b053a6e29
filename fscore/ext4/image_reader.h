// SPDX-License-Identifier: BSD-3-Clause
// Reads back what an existing image is: an ext4 filesystem (its geometry and
// where its journal is) or an external journal device. Images are
// untrusted input (a store a user hands the server, a file given to nvj):
// every field is checked before it is used, every read is bounded, and a
// bad image is a std::runtime_error saying what is wrong, never a crash.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/block_map.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/superblock.h"
#include "fscore/jbd2/journal_superblock.h"

namespace fscore::ext4 {

struct ImageInfo {
  bool journal_device = false;  // an external journal (mke2fs -O journal_dev), not a filesystem
  Superblock super;
  std::uint32_t block_size = 0;
  std::uint64_t blocks = 0;
  JournalKind journal = JournalKind::kNone;
  std::vector<BlockRun> journal_runs;  // internal journal: its blocks, in log order
  std::uint64_t journal_superblock_block = 0;  // internal: first run's start; device: 1 or 2
  jbd2::JournalSuperblock journal_super;       // internal journal or journal device
  std::array<std::uint8_t, 60> journal_root{};  // internal: the journal inode's i_block
  bool journal_extents = false;                 // internal: mapped by extents (else block-mapped)
};

// Whether the source starts with an ext2/3/4 superblock magic number.
bool has_ext4_magic(const BlockSource& source);

// Reads and checks the superblock and, for an internal journal, the
// journal inode and its extents and the jbd2 superblock.
ImageInfo read_image(const BlockSource& source);

// Group descriptor `group`, its checksum checked (metadata_csum). Throws
// std::runtime_error naming what is wrong.
GroupDesc read_group_desc(const BlockSource& source, const ImageInfo& info, std::uint32_t group);

// Inode `ino` of a filesystem read_image has read: its group descriptor and
// the inode itself checked (metadata_csum), the inode table inside the
// filesystem. Throws std::runtime_error naming what is wrong.
Inode read_inode(const BlockSource& source, const ImageInfo& info, std::uint32_t ino);
// The same inode's bytes as they are on disk (the superblock's inode size
// of them), checked as read_inode checks them.
std::vector<std::uint8_t> read_inode_bytes(const BlockSource& source, const ImageInfo& info, std::uint32_t ino);

}  // namespace fscore::ext4
