// SPDX-License-Identifier: BSD-3-Clause
// ext4 geometry: how many blocks, groups and inodes a filesystem of a given
// size gets, and where each group's metadata goes. Chosen the way mke2fs
// chooses them with Debian's mke2fs.conf for ext4 without resize_inode, so
// an image built here looks like one mke2fs would build (the tests compare
// with the real mke2fs and dumpe2fs).
#pragma once

#include <cstdint>

namespace fscore::ext4 {

// Whole blocks (groups, ...) of `b` that hold `a`: a / b rounded up.
constexpr std::uint64_t div_ceil(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// What the caller asks for; zero means "choose like mke2fs".
struct GeometryRequest {
  std::uint64_t device_bytes = 0;
  std::uint32_t block_size = 0;     // 1024, 2048 or 4096
  std::uint32_t inode_ratio = 0;    // bytes per inode
  std::uint32_t inode_size = 256;   // a power of two, 128 .. block size
  std::uint32_t flex_bg_size = 16;  // groups whose metadata is packed together
};

struct Geometry {
  std::uint32_t block_size = 0;
  std::uint64_t blocks = 0;             // may be less than the device holds (a tiny last group is dropped)
  std::uint32_t first_data_block = 0;   // 1 with 1 KiB blocks, else 0
  std::uint32_t blocks_per_group = 0;
  std::uint32_t groups = 0;
  std::uint32_t desc_size = 64;         // 64bit
  std::uint32_t desc_blocks = 0;        // blocks of group descriptors
  std::uint32_t inode_size = 0;
  std::uint32_t inodes_per_group = 0;
  std::uint32_t inode_table_blocks = 0; // per group
  std::uint64_t inodes = 0;
  std::uint32_t flex_bg_size = 0;

  // sparse_super: groups 0 and 1 and the powers of 3, 5 and 7 hold a backup
  // superblock and descriptors.
  bool has_super(std::uint32_t group) const;
  std::uint64_t group_first_block(std::uint32_t group) const;
  std::uint64_t group_blocks(std::uint32_t group) const;  // the last one may be short
};

// Throws std::invalid_argument saying what is wrong (too small, a block size
// that ext4 does not take, too many inodes).
Geometry plan_geometry(const GeometryRequest& request);

// The internal journal mke2fs gives a filesystem of `blocks` blocks
// (e2fsprogs' default journal size table), in blocks; 0 below 2048 blocks,
// where mke2fs makes no journal.
std::uint64_t default_journal_blocks(std::uint64_t blocks);

}  // namespace fscore::ext4
