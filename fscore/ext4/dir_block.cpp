#include "fscore/ext4/dir_block.h"

#include <cstring>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::ext4 {
namespace {

constexpr std::uint32_t kEntryHeader = 8;

std::uint32_t entry_size(std::size_t name_length) {
  return static_cast<std::uint32_t>((kEntryHeader + name_length + 3) & ~std::size_t{3});
}

// Writes the tail (a fake entry: inode 0, rec_len 12, name_len 0, type
// 0xDE) and its checksum over everything before it.
void seal(std::vector<std::uint8_t>& block, std::uint32_t dir_ino, std::uint32_t generation, std::uint32_t seed) {
  std::uint8_t* tail = block.data() + block.size() - kDirTailSize;
  std::memset(tail, 0, kDirTailSize);
  store_le<std::uint16_t>(tail + 4, kDirTailSize);
  tail[7] = 0xDE;
  std::uint8_t word[4];
  store_le<std::uint32_t>(word, dir_ino);
  std::uint32_t crc = crc32c(seed, word, 4);
  store_le<std::uint32_t>(word, generation);
  crc = crc32c(crc, word, 4);
  crc = crc32c(crc, block.data(), block.size() - kDirTailSize);
  store_le<std::uint32_t>(tail + 8, crc);
}

void put_entry(std::uint8_t* p, const DirEntry& e, std::uint32_t rec_len) {
  store_le<std::uint32_t>(p, e.ino);
  store_le<std::uint16_t>(p + 4, static_cast<std::uint16_t>(rec_len));
  p[6] = static_cast<std::uint8_t>(e.name.size());
  p[7] = static_cast<std::uint8_t>(e.type);
  std::memcpy(p + kEntryHeader, e.name.data(), e.name.size());
}

}  // namespace

std::vector<std::vector<std::uint8_t>> pack_directory(const std::vector<DirEntry>& entries, std::uint32_t block_size,
                                                      std::uint32_t dir_ino, std::uint32_t generation,
                                                      std::uint32_t seed) {
  const std::uint32_t usable = block_size - kDirTailSize;
  std::vector<std::vector<std::uint8_t>> blocks;
  std::vector<std::uint8_t> block;
  std::uint32_t used = 0;
  std::uint8_t* last = nullptr;  // the previous entry in this block, stretched when the block closes
  std::uint32_t last_at = 0;
  auto close = [&] {
    store_le<std::uint16_t>(last + 4, static_cast<std::uint16_t>(usable - last_at));
    seal(block, dir_ino, generation, seed);
    blocks.push_back(std::move(block));
  };
  for (const DirEntry& e : entries) {
    const std::uint32_t size = entry_size(e.name.size());
    if (last != nullptr && used + size > usable) {
      close();
      last = nullptr;
    }
    if (last == nullptr) {
      block.assign(block_size, 0);
      used = 0;
    }
    put_entry(block.data() + used, e, size);
    last = block.data() + used;
    last_at = used;
    used += size;
  }
  if (last != nullptr) close();
  return blocks;
}

std::vector<std::uint8_t> empty_directory_block(std::uint32_t block_size, std::uint32_t dir_ino,
                                                std::uint32_t generation, std::uint32_t seed) {
  if (block_size < 1024) throw std::invalid_argument("directory block smaller than 1024 bytes");
  std::vector<std::uint8_t> block(block_size, 0);
  store_le<std::uint16_t>(block.data() + 4, static_cast<std::uint16_t>(block_size - kDirTailSize));
  seal(block, dir_ino, generation, seed);
  return block;
}

}  // namespace fscore::ext4
