// Linear directory blocks (Documentation/filesystems/ext4/directory.rst):
// entries {le32 inode, le16 rec_len, u8 name_len, u8 file_type}, each
// rec_len a multiple of 4, the last running to the 12-byte metadata_csum
// tail that ends every block.
#pragma once

#include <cstdint>
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

// Packs `entries` (with "." and ".." first) into as many blocks as they
// need; every block gets its tail checksum for directory inode `dir_ino`.
std::vector<std::vector<std::uint8_t>> pack_directory(const std::vector<DirEntry>& entries, std::uint32_t block_size,
                                                      std::uint32_t dir_ino, std::uint32_t generation,
                                                      std::uint32_t csum_seed);

// An empty block (one unused entry spanning it), with its tail.
std::vector<std::uint8_t> empty_directory_block(std::uint32_t block_size, std::uint32_t dir_ino,
                                                std::uint32_t generation, std::uint32_t csum_seed);

}  // namespace fscore::ext4
