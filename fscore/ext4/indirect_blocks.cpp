// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/indirect_blocks.h"

#include <stdexcept>
#include <string>

#include "fscore/endian.h"

namespace fscore::ext4 {
namespace {

constexpr std::uint32_t kDirect = 12;

class Mapper {
 public:
  Mapper(const BlockSource& source, std::uint32_t block_size, std::uint64_t blocks_count, std::uint64_t file_blocks,
         std::uint64_t max_blocks, std::size_t max_extents)
      : source_(source), bs_(block_size), blocks_count_(blocks_count), file_blocks_(file_blocks),
        max_blocks_(max_blocks), max_extents_(max_extents),
        // A file of n blocks needs about n / (bs/4) single indirect blocks and
        // fewer of the other kinds: twice that, and a few, bounds the reads.
        max_indirect_(2 * ((file_blocks + block_size / 4 - 1) / (block_size / 4)) + 8) {}

  // Maps `block` (a data block, or a tree of `level` indirections) at file block `logical_`.
  void map(std::uint32_t block, int level) {
    const std::uint64_t per = bs_ / 4;
    std::uint64_t span = 1;
    for (int i = 0; i < level; ++i) span *= per;
    if (logical_ >= file_blocks_) return;
    if (block == 0) {  // a hole of `span` blocks
      logical_ += span;
      return;
    }
    if (block >= blocks_count_) throw std::runtime_error("block map: block " + std::to_string(block) + " is outside the filesystem");
    if (level == 0) {
      if (++mapped_ > max_blocks_) throw std::runtime_error("block map: more than " + std::to_string(max_blocks_) + " blocks");
      if (!out.empty() && out.back().logical + out.back().length == logical_ &&
          out.back().physical + out.back().length == block && out.back().length < kMaxExtentLength) {
        ++out.back().length;
      } else {
        if (out.size() >= max_extents_)
          throw std::runtime_error("block map: more than " + std::to_string(max_extents_) + " runs of blocks");
        out.push_back({static_cast<std::uint32_t>(logical_), block, 1});
      }
      ++logical_;
      return;
    }
    if (++indirect_ > max_indirect_) throw std::runtime_error("block map: more indirect blocks than the file needs");
    std::vector<std::uint8_t> buffer(bs_);
    source_.read(std::uint64_t{block} * bs_, buffer);
    for (std::uint64_t i = 0; i < per && logical_ < file_blocks_; ++i) map(load_le<std::uint32_t>(&buffer[4 * i]), level - 1);
  }

  std::vector<Extent> out;

 private:
  const BlockSource& source_;
  const std::uint32_t bs_;
  const std::uint64_t blocks_count_, file_blocks_, max_blocks_;
  const std::size_t max_extents_;
  const std::uint64_t max_indirect_;
  std::uint64_t logical_ = 0, mapped_ = 0, indirect_ = 0;
};

}  // namespace

std::vector<Extent> read_indirect_blocks(const std::array<std::uint8_t, 60>& i_block, const BlockSource& source,
                                         std::uint32_t block_size, std::uint64_t blocks_count,
                                         std::uint64_t file_blocks, std::uint64_t max_blocks,
                                         std::size_t max_extents) {
  Mapper m(source, block_size, blocks_count, file_blocks, max_blocks, max_extents);
  for (std::uint32_t i = 0; i < kDirect; ++i) m.map(load_le<std::uint32_t>(&i_block[4 * i]), 0);
  for (std::uint32_t level = 1; level <= 3; ++level)
    m.map(load_le<std::uint32_t>(&i_block[4 * (kDirect + level - 1)]), static_cast<int>(level));
  return std::move(m.out);
}

}  // namespace fscore::ext4
