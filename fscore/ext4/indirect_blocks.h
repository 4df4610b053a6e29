// SPDX-License-Identifier: BSD-3-Clause
// Block-mapped files (ext2/ext3, and ext4 inodes without EXTENTS_FL): twelve
// direct block numbers in i_block, then single, double and triple indirect
// blocks of little-endian 32-bit block numbers; 0 is a hole.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/extent_tree.h"

namespace fscore::ext4 {

// The file's first `file_blocks` blocks as extents (holes left out),
// following indirect blocks through `source`. Throws std::runtime_error for
// a block number outside the filesystem, more than `max_blocks` mapped, more
// than `max_extents` runs, or more indirect blocks than such a file needs:
// memory and reads stay bounded whatever the image says.
std::vector<Extent> read_indirect_blocks(const std::array<std::uint8_t, 60>& i_block, const BlockSource& source,
                                         std::uint32_t block_size, std::uint64_t blocks_count,
                                         std::uint64_t file_blocks, std::uint64_t max_blocks,
                                         std::size_t max_extents = std::size_t{1} << 16);

}  // namespace fscore::ext4
