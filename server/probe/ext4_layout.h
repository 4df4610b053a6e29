// SPDX-License-Identifier: BSD-3-Clause
// Ext4Layout: where an ext4 filesystem keeps its per-group metadata (block
// and inode bitmaps, inode tables, superblock and descriptor copies), read
// once from the data store when tracing starts. The journal tracer uses it
// to tell metadata from file data among logged blocks and to find the block
// bitmaps whose logged copies show which blocks a transaction allocated.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "server/store/store.h"

namespace nvj {

class Ext4Layout {
 public:
  // nullopt unless the store holds an ext4 filesystem that reads back.
  static std::optional<Ext4Layout> read(Store& data);

  std::uint32_t block_size() const { return block_size_; }
  // The group whose block bitmap is at `block`, if it is one.
  std::optional<std::uint32_t> bitmap_group(std::uint64_t block) const;
  // Where a group's block bitmap is, in bytes.
  std::uint64_t bitmap_block_offset(std::uint32_t group) const { return bitmap_of_group_.at(group) * block_size_; }
  // The first block a group's bitmap describes, and how many.
  std::uint64_t group_first_block(std::uint32_t group) const;
  std::uint32_t blocks_in_group(std::uint32_t group) const;
  // Whether a logged block is filesystem metadata: by where it is (bitmaps,
  // inode tables, superblock and descriptor blocks) or by what it holds
  // (extent tree blocks, directory blocks with a checksum tail, xattr
  // blocks).
  bool is_metadata(std::uint64_t block, std::span<const std::uint8_t> content) const;

 private:
  struct Range {
    std::uint64_t start, end;  // blocks [start, end)
  };
  bool in_fixed_metadata(std::uint64_t block) const;

  std::uint32_t block_size_ = 0;
  std::uint64_t blocks_ = 0;
  std::uint32_t first_data_block_ = 0;
  std::uint32_t blocks_per_group_ = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> bitmaps_;  // block -> group, sorted
  std::vector<Range> metadata_;                                   // sorted, merged
  std::vector<std::uint64_t> bitmap_of_group_;
};

}  // namespace nvj
