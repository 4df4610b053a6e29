// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/dir_block.h"

#include <cstring>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/inode.h"

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
  store_le<std::uint32_t>(tail + 8, crc32c(inode_csum_seed(seed, dir_ino, generation), block.data(),
                                           block.size() - kDirTailSize));
}

void put_entry(std::uint8_t* p, const DirEntry& e, std::uint32_t rec_len) {
  store_le<std::uint32_t>(p, e.ino);
  store_le<std::uint16_t>(p + 4, static_cast<std::uint16_t>(rec_len));  // blocks of 4 KiB at most: as it is
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

void seal_dir_leaf(std::span<std::uint8_t> block, std::uint32_t inode_seed) {
  if (block.size() < kDirTailSize) return;
  store_le<std::uint32_t>(block.data() + block.size() - kDirTailSize + 8,
                          crc32c(inode_seed, block.data(), block.size() - kDirTailSize));
}

std::uint32_t rec_len_from_disk(std::uint16_t raw, std::uint32_t block_size) {
  if (block_size < 65536) return raw;
  if (raw == 65535 || raw == 0) return block_size;
  return (raw & 65532u) | ((raw & 3u) << 16);
}

bool dir_leaf_checksum_ok(std::span<const std::uint8_t> block, std::uint32_t inode_seed) {
  if (block.size() < kDirTailSize) return false;
  const std::uint8_t* tail = block.data() + block.size() - kDirTailSize;
  const bool is_tail = load_le<std::uint32_t>(tail) == 0 && load_le<std::uint16_t>(tail + 4) == kDirTailSize &&
                       tail[6] == 0 && tail[7] == 0xDE;
  return is_tail && load_le<std::uint32_t>(tail + 8) == crc32c(inode_seed, block.data(), block.size() - kDirTailSize);
}

DxBlockCheck dx_block_checksum(std::span<const std::uint8_t> block, std::uint32_t inode_seed) {
  constexpr std::size_t kTail = 8;  // dx_tail: dt_reserved, dt_checksum
  const std::size_t bs = block.size();
  if (bs < 40) return DxBlockCheck::not_index;
  const std::uint8_t* p = block.data();
  const std::uint32_t first_len = rec_len_from_disk(load_le<std::uint16_t>(p + 4), static_cast<std::uint32_t>(bs));
  std::size_t count_offset = 0;
  if (first_len == bs) {
    count_offset = 8;  // an index node: one empty entry over the block
  } else if (first_len == 12 && rec_len_from_disk(load_le<std::uint16_t>(p + 16), static_cast<std::uint32_t>(bs)) == bs - 12 &&
             load_le<std::uint32_t>(p + 24) == 0 &&
             p[29] == 8) {
    count_offset = 32;  // the root: ".", "..", then dx_root_info
  } else {
    return DxBlockCheck::not_index;
  }
  const std::uint16_t limit = load_le<std::uint16_t>(p + count_offset);
  const std::uint16_t count = load_le<std::uint16_t>(p + count_offset + 2);
  if (count > limit || count_offset + std::size_t{limit} * 8 > bs - kTail) return DxBlockCheck::no_room;
  const std::uint8_t* tail = p + count_offset + std::size_t{limit} * 8;
  std::uint32_t crc = crc32c(inode_seed, p, count_offset + std::size_t{count} * 8);
  crc = crc32c(crc, tail, 4);
  const std::uint8_t zero[4] = {0, 0, 0, 0};
  crc = crc32c(crc, zero, 4);
  return load_le<std::uint32_t>(tail + 4) == crc ? DxBlockCheck::ok : DxBlockCheck::bad_checksum;
}

}  // namespace fscore::ext4
