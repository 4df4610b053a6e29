// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/group_desc.h"

#include <cstring>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::ext4 {
namespace {

// Offsets in struct ext4_group_desc (Documentation/filesystems/ext4/group_descr.rst).
constexpr std::size_t kBlockBitmapLo = 0x00, kInodeBitmapLo = 0x04, kInodeTableLo = 0x08,
                      kFreeBlocksLo = 0x0C, kFreeInodesLo = 0x0E, kUsedDirsLo = 0x10, kFlags = 0x12,
                      kBlockBitmapCsumLo = 0x18, kInodeBitmapCsumLo = 0x1A, kItableUnusedLo = 0x1C,
                      kChecksum = 0x1E, kBlockBitmapHi = 0x20, kInodeBitmapHi = 0x24, kInodeTableHi = 0x28,
                      kFreeBlocksHi = 0x2C, kFreeInodesHi = 0x2E, kUsedDirsHi = 0x30, kItableUnusedHi = 0x32,
                      kBlockBitmapCsumHi = 0x38, kInodeBitmapCsumHi = 0x3A;

std::uint16_t lo16(std::uint32_t v) { return static_cast<std::uint16_t>(v); }
std::uint16_t hi16(std::uint32_t v) { return static_cast<std::uint16_t>(v >> 16); }

std::uint16_t desc_checksum(std::span<const std::uint8_t> desc, std::uint32_t group, std::uint32_t seed) {
  std::uint8_t group_le[4];
  store_le<std::uint32_t>(group_le, group);
  std::uint32_t crc = crc32c(seed, group_le, 4);
  crc = crc32c(crc, desc.data(), kChecksum);
  const std::uint8_t zero[2] = {0, 0};
  crc = crc32c(crc, zero, 2);
  if (desc.size() > kChecksum + 2) crc = crc32c(crc, desc.data() + kChecksum + 2, desc.size() - kChecksum - 2);
  return static_cast<std::uint16_t>(crc & 0xFFFF);
}

}  // namespace

void encode_group_desc(const GroupDesc& d, std::uint32_t group, std::uint32_t csum_seed, bool metadata_csum,
                       std::span<std::uint8_t> out) {
  std::uint8_t* p = out.data();
  std::memset(p, 0, out.size());
  store_le<std::uint32_t>(p + kBlockBitmapLo, static_cast<std::uint32_t>(d.block_bitmap));
  store_le<std::uint32_t>(p + kInodeBitmapLo, static_cast<std::uint32_t>(d.inode_bitmap));
  store_le<std::uint32_t>(p + kInodeTableLo, static_cast<std::uint32_t>(d.inode_table));
  store_le<std::uint16_t>(p + kFreeBlocksLo, lo16(d.free_blocks));
  store_le<std::uint16_t>(p + kFreeInodesLo, lo16(d.free_inodes));
  store_le<std::uint16_t>(p + kUsedDirsLo, lo16(d.used_dirs));
  store_le<std::uint16_t>(p + kFlags, d.flags);
  store_le<std::uint16_t>(p + kBlockBitmapCsumLo, lo16(d.block_bitmap_csum));
  store_le<std::uint16_t>(p + kInodeBitmapCsumLo, lo16(d.inode_bitmap_csum));
  store_le<std::uint16_t>(p + kItableUnusedLo, lo16(d.itable_unused));
  if (out.size() >= 64) {
    store_le<std::uint32_t>(p + kBlockBitmapHi, static_cast<std::uint32_t>(d.block_bitmap >> 32));
    store_le<std::uint32_t>(p + kInodeBitmapHi, static_cast<std::uint32_t>(d.inode_bitmap >> 32));
    store_le<std::uint32_t>(p + kInodeTableHi, static_cast<std::uint32_t>(d.inode_table >> 32));
    store_le<std::uint16_t>(p + kFreeBlocksHi, hi16(d.free_blocks));
    store_le<std::uint16_t>(p + kFreeInodesHi, hi16(d.free_inodes));
    store_le<std::uint16_t>(p + kUsedDirsHi, hi16(d.used_dirs));
    store_le<std::uint16_t>(p + kItableUnusedHi, hi16(d.itable_unused));
    store_le<std::uint16_t>(p + kBlockBitmapCsumHi, hi16(d.block_bitmap_csum));
    store_le<std::uint16_t>(p + kInodeBitmapCsumHi, hi16(d.inode_bitmap_csum));
  }
  if (metadata_csum) store_le<std::uint16_t>(p + kChecksum, desc_checksum(out, group, csum_seed));
}

GroupDesc decode_group_desc(std::span<const std::uint8_t> in) {
  const std::uint8_t* p = in.data();
  GroupDesc d;
  d.block_bitmap = load_le<std::uint32_t>(p + kBlockBitmapLo);
  d.inode_bitmap = load_le<std::uint32_t>(p + kInodeBitmapLo);
  d.inode_table = load_le<std::uint32_t>(p + kInodeTableLo);
  d.free_blocks = load_le<std::uint16_t>(p + kFreeBlocksLo);
  d.free_inodes = load_le<std::uint16_t>(p + kFreeInodesLo);
  d.used_dirs = load_le<std::uint16_t>(p + kUsedDirsLo);
  d.flags = load_le<std::uint16_t>(p + kFlags);
  d.block_bitmap_csum = load_le<std::uint16_t>(p + kBlockBitmapCsumLo);
  d.inode_bitmap_csum = load_le<std::uint16_t>(p + kInodeBitmapCsumLo);
  d.itable_unused = load_le<std::uint16_t>(p + kItableUnusedLo);
  if (in.size() >= 64) {
    d.block_bitmap |= std::uint64_t{load_le<std::uint32_t>(p + kBlockBitmapHi)} << 32;
    d.inode_bitmap |= std::uint64_t{load_le<std::uint32_t>(p + kInodeBitmapHi)} << 32;
    d.inode_table |= std::uint64_t{load_le<std::uint32_t>(p + kInodeTableHi)} << 32;
    d.free_blocks |= std::uint32_t{load_le<std::uint16_t>(p + kFreeBlocksHi)} << 16;
    d.free_inodes |= std::uint32_t{load_le<std::uint16_t>(p + kFreeInodesHi)} << 16;
    d.used_dirs |= std::uint32_t{load_le<std::uint16_t>(p + kUsedDirsHi)} << 16;
    d.itable_unused |= std::uint32_t{load_le<std::uint16_t>(p + kItableUnusedHi)} << 16;
    d.block_bitmap_csum |= std::uint32_t{load_le<std::uint16_t>(p + kBlockBitmapCsumHi)} << 16;
    d.inode_bitmap_csum |= std::uint32_t{load_le<std::uint16_t>(p + kInodeBitmapCsumHi)} << 16;
  }
  return d;
}

bool group_desc_checksum_ok(std::span<const std::uint8_t> in, std::uint32_t group, std::uint32_t csum_seed) {
  return load_le<std::uint16_t>(in.data() + kChecksum) == desc_checksum(in, group, csum_seed);
}

std::uint32_t bitmap_checksum(std::uint32_t csum_seed, std::span<const std::uint8_t> bitmap) {
  return crc32c(csum_seed, bitmap.data(), bitmap.size());
}

}  // namespace fscore::ext4
