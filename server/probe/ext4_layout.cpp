// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/ext4_layout.h"

#include <algorithm>
#include <cstring>

#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/geometry.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/superblock.h"

namespace nvj {
namespace {

constexpr std::uint16_t kExtentMagic = 0xF30A;
constexpr std::uint32_t kXattrMagic = 0xEA020000;
constexpr std::uint8_t kDirTailFileType = 0xDE;
constexpr std::uint32_t kMaxGroups = 1u << 20;  // 128 TiB at 4 KiB: more than any store here

}  // namespace

std::optional<Ext4Layout> Ext4Layout::read(Store& data) {
  if (data.size() < 2048) return std::nullopt;
  std::uint8_t raw[1024];
  data.read(raw, sizeof raw, 1024);
  if (fscore::load_le<std::uint16_t>(raw + fscore::ext4::sb::kMagic) != fscore::ext4::kSuperMagic) return std::nullopt;
  fscore::ext4::Superblock sb;
  try {
    sb = fscore::ext4::decode_superblock(std::span<const std::uint8_t, 1024>(raw));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  Ext4Layout l;
  l.block_size_ = sb.block_size();
  l.blocks_ = sb.blocks_count;
  l.first_data_block_ = sb.first_data_block;
  l.blocks_per_group_ = sb.blocks_per_group;
  if (l.blocks_per_group_ == 0 || l.blocks_ <= sb.first_data_block) return std::nullopt;
  const std::uint64_t groups = fscore::ext4::div_ceil(l.blocks_ - sb.first_data_block, l.blocks_per_group_);
  if (groups > kMaxGroups) return std::nullopt;
  const std::size_t desc_size = (sb.feature_incompat & fscore::ext4::incompat::k64bit) != 0 && sb.desc_size >= 64 ? sb.desc_size : 32;
  const std::uint64_t table = std::uint64_t{sb.first_data_block} + 1;
  const std::uint64_t table_blocks = fscore::ext4::div_ceil(groups * desc_size, l.block_size_);
  if ((table + table_blocks) * l.block_size_ > data.size()) return std::nullopt;
  std::vector<std::uint8_t> descs(table_blocks * l.block_size_);
  data.read(descs.data(), static_cast<std::uint32_t>(descs.size()), table * l.block_size_);
  const std::uint64_t inode_table_blocks =
      fscore::ext4::div_ceil(std::uint64_t{sb.inodes_per_group} * sb.inode_size, l.block_size_);
  // The superblock and descriptor table at the start (backups elsewhere are
  // rarely journalled and not listed).
  l.metadata_.push_back({0, table + table_blocks});
  for (std::uint32_t g = 0; g < groups; ++g) {
    std::uint8_t entry[64] = {};
    std::memcpy(entry, descs.data() + g * desc_size, desc_size);
    const auto d = fscore::ext4::decode_group_desc(std::span<const std::uint8_t>(entry, desc_size));
    l.bitmaps_.emplace_back(d.block_bitmap, g);
    l.bitmap_of_group_.push_back(d.block_bitmap);
    l.metadata_.push_back({d.block_bitmap, d.block_bitmap + 1});
    l.metadata_.push_back({d.inode_bitmap, d.inode_bitmap + 1});
    l.metadata_.push_back({d.inode_table, d.inode_table + inode_table_blocks});
  }
  std::sort(l.bitmaps_.begin(), l.bitmaps_.end());
  std::sort(l.metadata_.begin(), l.metadata_.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
  std::vector<Range> merged;
  for (const Range& r : l.metadata_) {
    if (!merged.empty() && r.start <= merged.back().end) merged.back().end = std::max(merged.back().end, r.end);
    else merged.push_back(r);
  }
  l.metadata_ = std::move(merged);
  return l;
}

std::optional<std::uint32_t> Ext4Layout::bitmap_group(std::uint64_t block) const {
  const auto it = std::lower_bound(bitmaps_.begin(), bitmaps_.end(), std::make_pair(block, std::uint32_t{0}));
  if (it == bitmaps_.end() || it->first != block) return std::nullopt;
  return it->second;
}

std::uint64_t Ext4Layout::group_first_block(std::uint32_t group) const {
  return first_data_block_ + std::uint64_t{group} * blocks_per_group_;
}

std::uint32_t Ext4Layout::blocks_in_group(std::uint32_t group) const {
  const std::uint64_t first = group_first_block(group);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(blocks_per_group_, blocks_ - first));
}

bool Ext4Layout::in_fixed_metadata(std::uint64_t block) const {
  const auto it = std::upper_bound(metadata_.begin(), metadata_.end(), block,
                                   [](std::uint64_t b, const Range& r) { return b < r.start; });
  return it != metadata_.begin() && block < std::prev(it)->end;
}

bool Ext4Layout::is_metadata(std::uint64_t block, std::span<const std::uint8_t> content) const {
  if (in_fixed_metadata(block)) return true;
  if (content.size() < 16) return false;
  if (fscore::load_le<std::uint16_t>(content.data()) == kExtentMagic) return true;
  if (fscore::load_le<std::uint32_t>(content.data()) == kXattrMagic) return true;
  // A directory block's checksum tail: inode 0, rec_len 12, name_len 0, type 0xDE.
  const std::uint8_t* tail = content.data() + content.size() - 12;
  return fscore::load_le<std::uint32_t>(tail) == 0 && fscore::load_le<std::uint16_t>(tail + 4) == 12 &&
         tail[6] == 0 && tail[7] == kDirTailFileType;
}

}  // namespace nvj
