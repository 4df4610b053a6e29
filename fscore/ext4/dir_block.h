// SPDX-License-Identifier: BSD-3-Clause
// Linear directory blocks (Documentation/filesystems/ext4/directory.rst):
// entries {le32 inode, le16 rec_len, u8 name_len, u8 file_type}, each
// rec_len a multiple of 4, the last running to the 12-byte metadata_csum
// tail that ends every block.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fscore::ext4 {

// Directory entry file types.
enum class FileType : std::uint8_t { kUnknown = 0, kRegular = 1, kDirectory = 2, kChar = 3, kBlock = 4,
                                     kFifo = 5, kSocket = 6, kSymlink = 7 };

struct DirEntry {
  std::uint32_t ino = 0;
  FileType type = FileType::kUnknown;
  std::string name;  // 1..255 bytes, no '/' or NUL
};

inline constexpr std::size_t kMaxNameLength = 255;
inline constexpr std::uint32_t kDirTailSize = 12;

// rec_len as the kernel and e2fsprogs read it (ext4_rec_len_from_disk,
// ext2fs_get_rec_len): with blocks of 64 KiB and more, 0 and 65535 mean the
// whole block and the low two bits carry bits 16 and 17; smaller blocks
// store the length as it is.
std::uint32_t rec_len_from_disk(std::uint16_t raw, std::uint32_t block_size);

// Packs `entries` (with "." and ".." first) into as many blocks as they
// need; every block gets its tail checksum for directory inode `dir_ino`.
std::vector<std::vector<std::uint8_t>> pack_directory(const std::vector<DirEntry>& entries, std::uint32_t block_size,
                                                      std::uint32_t dir_ino, std::uint32_t generation,
                                                      std::uint32_t csum_seed);

// Whether a directory leaf block ends with its metadata_csum tail (a fake
// entry: inode 0, rec_len 12, name_len 0, type 0xDE) holding the crc32c of
// the rest under the directory inode's seed (inode_csum_seed).
bool dir_leaf_checksum_ok(std::span<const std::uint8_t> block, std::uint32_t inode_seed);

// Writes the tail's checksum of a leaf block that has its tail (after an
// entry in it changed).
void seal_dir_leaf(std::span<std::uint8_t> block, std::uint32_t inode_seed);

// An htree index block (the root or an interior node) and its dx_tail
// checksum, as the kernel's ext4_dx_csum_verify reads them.
enum class DxBlockCheck {
  ok,
  not_index,     // neither a root nor a node: no dx_countlimit where one would be
  no_room,       // its count and limit leave no room for the tail
  bad_checksum,
};
DxBlockCheck dx_block_checksum(std::span<const std::uint8_t> block, std::uint32_t inode_seed);

// An empty block (one unused entry spanning it), with its tail.
std::vector<std::uint8_t> empty_directory_block(std::uint32_t block_size, std::uint32_t dir_ino,
                                                std::uint32_t generation, std::uint32_t csum_seed);

}  // namespace fscore::ext4
