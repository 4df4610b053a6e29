// SPDX-License-Identifier: BSD-3-Clause
// Extent trees (Documentation/filesystems/ext4/ifork.rst): the root lives in
// the inode's i_block (a header and up to 4 entries); bigger trees put
// leaves and index nodes in blocks of their own, each ending with a
// metadata_csum tail.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "fscore/block_io.h"

namespace fscore::ext4 {

struct Extent {
  std::uint32_t logical = 0;   // first file block
  std::uint64_t physical = 0;  // first device block
  std::uint32_t length = 0;    // blocks
  bool unwritten = false;      // allocated, reads as zeroes (read_extent_tree says; the builder writes none)
};

inline constexpr std::uint32_t kMaxExtentLength = 32768;  // an initialized extent
inline constexpr std::uint16_t kExtentMagic = 0xF30A;

struct ExtentTree {
  std::array<std::uint8_t, 60> root{};
  // Blocks outside the inode (leaves and index nodes), to be written.
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> blocks;
};

// Builds the tree for `extents` (sorted by logical block, not overlapping;
// longer runs are split at 32768 blocks). `allocate` returns a free block
// for each tree node it needs. Checksums use the inode's seed.
ExtentTree build_extent_tree(std::span<const Extent> extents, std::uint32_t block_size, std::uint32_t ino,
                             std::uint32_t generation, std::uint32_t csum_seed,
                             const std::function<std::uint64_t()>& allocate);

// How many tree blocks build_extent_tree needs for `count` extents.
std::uint64_t extent_tree_blocks(std::uint64_t count, std::uint32_t block_size);

// Splits runs longer than an extent may be.
std::vector<Extent> split_long_extents(std::span<const Extent> runs);

// Reads an inode's extents back, following index blocks through `source`.
// Throws std::runtime_error on a malformed tree (bad magic, depth, entry
// counts, blocks past `blocks_count`, more than `max_extents` extents) and,
// given the inode's checksum seed (inode_csum_seed; metadata_csum), on a
// tree block whose tail checksum does not match, as the kernel refuses it.
std::vector<Extent> read_extent_tree(const std::array<std::uint8_t, 60>& root, const BlockSource& source,
                                     std::uint32_t block_size, std::uint64_t blocks_count,
                                     std::size_t max_extents, std::optional<std::uint32_t> inode_seed = std::nullopt);

}  // namespace fscore::ext4
