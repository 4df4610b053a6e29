// SPDX-License-Identifier: BSD-3-Clause
// ext4 inodes (struct ext4_inode) with the 32 bytes of extra fields every
// inode here carries: nanosecond times, creation time and the high half of
// the metadata_csum checksum. Layout: Documentation/filesystems/ext4/inodes.rst.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace fscore::ext4 {

struct Timestamp {
  std::int64_t sec = 0;
  std::uint32_t nsec = 0;
};

struct Inode {
  std::uint16_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t size = 0;
  Timestamp atime, ctime, mtime, crtime;
  std::uint32_t dtime = 0;
  std::uint16_t links = 0;
  std::uint64_t blocks_512 = 0;  // i_blocks: 512-byte units, tree blocks included
  std::uint32_t flags = 0;
  std::array<std::uint8_t, 60> block{};  // i_block: extent root, symlink target or device number
  std::uint32_t generation = 0;
  std::uint16_t extra_isize = 32;
};

// Mode bits (the kernel's S_IF* values, as stored on disk).
inline constexpr std::uint16_t kModeFifo = 0010000, kModeChar = 0020000, kModeDir = 0040000,
                               kModeBlock = 0060000, kModeRegular = 0100000, kModeSymlink = 0120000,
                               kModeSocket = 0140000, kModeTypeMask = 0170000;

// Writes inode `ino` into `out` (the inode size: 256 here), with the
// metadata_csum checksum.
void encode_inode(const Inode& inode, std::uint32_t ino, std::uint32_t csum_seed, std::span<std::uint8_t> out);
Inode decode_inode(std::span<const std::uint8_t> in);
bool inode_checksum_ok(std::span<const std::uint8_t> in, std::uint32_t ino, std::uint32_t csum_seed);

// The seed of the checksums of an inode's own metadata blocks (extent tree
// blocks, directory blocks): the filesystem's seed (Superblock::csum_seed)
// followed by the inode's number and generation, little-endian.
std::uint32_t inode_csum_seed(std::uint32_t fs_seed, std::uint32_t ino, std::uint32_t generation);

// The on-disk device number in i_block, as the kernel encodes it: the old
// 16-bit form in word 0 when major and minor fit a byte, else the new form
// in word 1.
void encode_device_number(std::uint32_t major, std::uint32_t minor, std::array<std::uint8_t, 60>& block);

}  // namespace fscore::ext4
