// SPDX-License-Identifier: BSD-3-Clause
// Block group descriptors (struct ext4_group_desc, 64 bytes with the 64bit
// feature; 32 without), with their metadata_csum checksum: the low 16 bits
// of crc32c(seed, le32 group number, descriptor with the checksum zeroed).
#pragma once

#include <cstdint>
#include <span>

namespace fscore::ext4 {

struct GroupDesc {
  std::uint64_t block_bitmap = 0;
  std::uint64_t inode_bitmap = 0;
  std::uint64_t inode_table = 0;
  std::uint32_t free_blocks = 0;
  std::uint32_t free_inodes = 0;
  std::uint32_t used_dirs = 0;
  std::uint16_t flags = 0;
  std::uint32_t block_bitmap_csum = 0;
  std::uint32_t inode_bitmap_csum = 0;
  std::uint32_t itable_unused = 0;
};

// `out` is desc_size bytes (32 or 64); the checksum is set when csum_seed is
// given (metadata_csum).
void encode_group_desc(const GroupDesc& d, std::uint32_t group, std::uint32_t csum_seed, bool metadata_csum,
                       std::span<std::uint8_t> out);
GroupDesc decode_group_desc(std::span<const std::uint8_t> in);
// Whether the stored checksum matches.
bool group_desc_checksum_ok(std::span<const std::uint8_t> in, std::uint32_t group, std::uint32_t csum_seed);

// Bitmap checksums as the descriptor stores them: crc32c(seed, the bitmap's
// first `bytes` bytes): blocks per group / 8 or inodes per group / 8.
std::uint32_t bitmap_checksum(std::uint32_t csum_seed, std::span<const std::uint8_t> bitmap);

}  // namespace fscore::ext4
