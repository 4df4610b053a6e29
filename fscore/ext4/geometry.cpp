// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/geometry.h"

#include <stdexcept>
#include <string>

namespace fscore::ext4 {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kTiB = std::uint64_t{1} << 40;
constexpr std::uint32_t kFirstInode = 11;  // EXT4_GOOD_OLD_FIRST_INO


bool is_power_of(std::uint32_t n, std::uint32_t base) {
  while (n > 1 && n % base == 0) n /= base;
  return n == 1;
}

// mke2fs's size types (misc/mke2fs.c) and Debian's mke2fs.conf values.
std::uint32_t default_block_size(std::uint64_t bytes) { return bytes < 512 * kMiB ? 1024 : 4096; }

std::uint32_t default_inode_ratio(std::uint64_t bytes) {
  if (bytes < 3 * kMiB) return 8192;    // floppy
  if (bytes < 512 * kMiB) return 4096;  // small
  if (bytes < 4 * kTiB) return 16384;   // default
  if (bytes < 16 * kTiB) return 32768;  // big
  return 65536;                         // huge
}

}  // namespace

bool Geometry::has_super(std::uint32_t group) const {
  return group <= 1 || is_power_of(group, 3) || is_power_of(group, 5) || is_power_of(group, 7);
}

std::uint64_t Geometry::group_first_block(std::uint32_t group) const {
  return first_data_block + std::uint64_t{group} * blocks_per_group;
}

std::uint64_t Geometry::group_blocks(std::uint32_t group) const {
  const std::uint64_t first = group_first_block(group);
  return std::min<std::uint64_t>(blocks_per_group, blocks - first);
}

Geometry plan_geometry(const GeometryRequest& r) {
  Geometry g;
  g.block_size = r.block_size != 0 ? r.block_size : default_block_size(r.device_bytes);
  if (g.block_size != 1024 && g.block_size != 2048 && g.block_size != 4096)
    throw std::invalid_argument("block size " + std::to_string(g.block_size) + ": ext4 here takes 1024, 2048 or 4096");
  if (r.inode_size < 128 || r.inode_size > g.block_size || (r.inode_size & (r.inode_size - 1)) != 0)
    throw std::invalid_argument("inode size " + std::to_string(r.inode_size) +
                                ": a power of two from 128 to the block size");
  g.inode_size = r.inode_size;
  g.flex_bg_size = r.flex_bg_size;
  g.first_data_block = g.block_size == 1024 ? 1 : 0;
  g.blocks = r.device_bytes / g.block_size;
  g.blocks_per_group = 8 * g.block_size;
  const std::uint32_t ratio = r.inode_ratio != 0 ? r.inode_ratio : default_inode_ratio(r.device_bytes);
  // mke2fs counts whole blocks: blocks * block size / ratio.
  std::uint64_t wanted_inodes = std::max<std::uint64_t>(g.blocks * g.block_size / ratio, kFirstInode + 1);
  const std::uint32_t inodes_per_block = g.block_size / g.inode_size;
  const std::uint32_t max_ipg = (1u << 16) - inodes_per_block;  // EXT2_MAX_INODES_PER_GROUP

  for (;;) {
    if (g.blocks <= g.first_data_block) throw std::invalid_argument("the device is too small for ext4");
    g.groups = static_cast<std::uint32_t>(div_ceil(g.blocks - g.first_data_block, g.blocks_per_group));
    g.desc_blocks = static_cast<std::uint32_t>(div_ceil(g.groups, g.block_size / g.desc_size));
    if (std::uint64_t{g.desc_blocks} + 1 >= g.blocks_per_group)  // mke2fs would turn on meta_bg
      throw std::invalid_argument(std::to_string(g.groups) + " block groups need " + std::to_string(g.desc_blocks) +
                                  " blocks of descriptors, more than a group holds (meta_bg is not built here): " +
                                  (g.block_size < 4096 ? "use a larger block size" : "the device is too large"));
    std::uint64_t ipg = div_ceil(wanted_inodes, g.groups);
    if (ipg > 8ull * g.block_size) {  // more than one bitmap's worth: smaller groups
      if (g.blocks_per_group < 256) throw std::invalid_argument("too many inodes for the device");
      g.blocks_per_group -= 8;
      g.blocks = r.device_bytes / g.block_size;
      continue;
    }
    ipg = std::min<std::uint64_t>(ipg, max_ipg);
    // Fill the inode table's last block, then round down to a multiple of 8.
    g.inode_table_blocks = static_cast<std::uint32_t>(div_ceil(ipg * g.inode_size, g.block_size));
    ipg = (std::uint64_t{g.inode_table_blocks} * g.block_size / g.inode_size) & ~std::uint64_t{7};
    g.inode_table_blocks = static_cast<std::uint32_t>(div_ceil(ipg * g.inode_size, g.block_size));
    g.inodes_per_group = static_cast<std::uint32_t>(ipg);
    g.inodes = std::uint64_t{g.inodes_per_group} * g.groups;
    if (g.inodes > 0xFFFFFFFFull) throw std::invalid_argument("more than 2^32 inodes");

    // A last group too small for its own metadata and 50 blocks is dropped.
    std::uint64_t overhead = 2 + g.inode_table_blocks;
    if (g.has_super(g.groups - 1)) overhead += 1 + g.desc_blocks;
    const std::uint64_t rem = (g.blocks - g.first_data_block) % g.blocks_per_group;
    if (g.groups == 1 && rem != 0 && rem < overhead) throw std::invalid_argument("the device is too small for ext4");
    if (rem != 0 && rem < overhead + 50) {
      g.blocks -= rem;
      continue;
    }
    return g;
  }
}

std::uint64_t default_journal_blocks(std::uint64_t blocks) {
  if (blocks < 2048) return 0;
  if (blocks < 32768) return 1024;
  if (blocks < 256 * 1024) return 4096;
  if (blocks < 512 * 1024) return 8192;
  if (blocks < 4096 * 1024) return 16384;
  if (blocks < 8192 * 1024) return 32768;
  if (blocks < 16384 * 1024) return 65536;
  if (blocks < 32768 * 1024) return 131072;
  return 262144;
}

}  // namespace fscore::ext4
