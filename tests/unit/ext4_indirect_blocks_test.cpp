// SPDX-License-Identifier: BSD-3-Clause
// The block maps of indirect blocks that ext3 files use instead of extents,
// read from an in-memory device as extents.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fscore/endian.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/indirect_blocks.h"
#include "tests/support/sparse_image.h"

namespace ext4_indirect_blocks_test {

using fscore::ext4::Extent;

namespace {

namespace ext4 = fscore::ext4;

using MemoryDevice = nvj::test::SparseImage;

void check_equal(const std::vector<Extent>& got, const std::vector<Extent>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].logical == want[i].logical);
    CHECK(got[i].physical == want[i].physical);
    CHECK(got[i].length == want[i].length);
  }
}

// Writes a block of little-endian 32-bit block numbers.
void write_pointers(MemoryDevice& dev, std::uint64_t block, std::uint32_t block_size, const std::vector<std::uint32_t>& pointers) {
  std::vector<std::uint8_t> bytes(block_size, 0);
  for (std::size_t i = 0; i < pointers.size(); ++i) fscore::store_le<std::uint32_t>(bytes.data() + 4 * i, pointers[i]);
  dev.write(block * block_size, bytes);
}

std::array<std::uint8_t, 60> i_block_of(const std::vector<std::uint32_t>& slots) {
  std::array<std::uint8_t, 60> b{};
  for (std::size_t i = 0; i < slots.size(); ++i) fscore::store_le<std::uint32_t>(b.data() + 4 * i, slots[i]);
  return b;
}

std::vector<std::uint32_t> counting(std::uint32_t first, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + static_cast<std::uint32_t>(i);
  return v;
}

}  // namespace

TEST_CASE("block map of direct blocks becomes extents with holes left out", "[ext4][indirect]") {
  MemoryDevice dev(std::uint64_t{1} << 24);
  const std::uint64_t blocks = dev.size() / 1024;
  // Blocks 100 101 102, a hole, 200 201, then nothing.
  const auto i_block = i_block_of({100, 101, 102, 0, 200, 201});
  check_equal(ext4::read_indirect_blocks(i_block, dev, 1024, blocks, 6, 100), {{0, 100, 3}, {4, 200, 2}});
  // Only the file's blocks count: a size of 2 blocks stops after 101.
  check_equal(ext4::read_indirect_blocks(i_block, dev, 1024, blocks, 2, 100), {{0, 100, 2}});
  CHECK(dev.reads() == 0u);
}

TEST_CASE("block map follows single and double indirect blocks", "[ext4][indirect]") {
  const std::uint32_t bs = 1024;
  const std::uint32_t per = bs / 4;  // 256
  MemoryDevice dev(std::uint64_t{1} << 26);
  const std::uint64_t blocks = dev.size() / bs;
  // 12 + 256 + 300 blocks, physically contiguous from 5000: one extent.
  const std::uint64_t file_blocks = 12 + per + 300;
  std::vector<std::uint32_t> slots = counting(5000, 12);
  slots.push_back(60000);  // single indirect
  slots.push_back(60001);  // double indirect
  write_pointers(dev, 60000, bs, counting(5012, per));
  write_pointers(dev, 60001, bs, {60002, 60003});
  write_pointers(dev, 60002, bs, counting(5012 + per, per));
  write_pointers(dev, 60003, bs, counting(5012 + 2 * per, 300 - per));
  const auto i_block = i_block_of(slots);
  check_equal(ext4::read_indirect_blocks(i_block, dev, bs, blocks, file_blocks, file_blocks),
              {{0, 5000, static_cast<std::uint32_t>(file_blocks)}});
  // A hole where the single indirect block would be: 256 blocks of hole.
  slots[12] = 0;
  check_equal(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, file_blocks, file_blocks),
              {{0, 5000, 12}, {12 + per, 5012 + per, 300}});
}

TEST_CASE("block map splits runs longer than an extent may be", "[ext4][indirect]") {
  const std::uint32_t bs = 4096;
  const std::uint32_t per = bs / 4;  // 1024
  MemoryDevice dev(std::uint64_t{1} << 30);
  const std::uint64_t blocks = dev.size() / bs;
  const std::uint32_t file_blocks = 40000;
  std::vector<std::uint32_t> slots = counting(10000, 12);
  slots.push_back(200000);
  slots.push_back(200001);
  write_pointers(dev, 200000, bs, counting(10012, per));
  std::vector<std::uint32_t> second;
  std::uint32_t next = 10012 + per;
  for (std::uint32_t left = file_blocks - 12 - per; left > 0;) {
    const std::uint32_t n = std::min(left, per);
    const auto block = 200002 + static_cast<std::uint32_t>(second.size());
    second.push_back(block);
    write_pointers(dev, block, bs, counting(next, n));
    next += n;
    left -= n;
  }
  write_pointers(dev, 200001, bs, second);
  check_equal(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, file_blocks, file_blocks),
              {{0, 10000, 32768}, {32768, 10000 + 32768, file_blocks - 32768}});
}

TEST_CASE("block map rejects blocks outside the filesystem and too many blocks", "[ext4][indirect]") {
  const std::uint32_t bs = 1024;
  MemoryDevice dev(std::uint64_t{1} << 24);
  const std::uint64_t blocks = dev.size() / bs;  // 16384
  CHECK_THROWS_WITH(ext4::read_indirect_blocks(i_block_of({100, static_cast<std::uint32_t>(blocks)}), dev, bs, blocks, 2, 10),
                    Catch::Contains("outside"));
  std::vector<std::uint32_t> slots = counting(100, 12);
  slots.push_back(static_cast<std::uint32_t>(blocks + 5));  // the single indirect block itself
  CHECK_THROWS_WITH(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, 20, 100), Catch::Contains("outside"));
  // An indirect block naming a block outside.
  slots[12] = 3000;
  write_pointers(dev, 3000, bs, {500, 0xFFFFFFFFu});
  CHECK_THROWS_WITH(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, 20, 100), Catch::Contains("outside"));
  // More mapped blocks than allowed.
  CHECK_THROWS_AS(ext4::read_indirect_blocks(i_block_of(counting(100, 12)), dev, bs, blocks, 12, 11), std::runtime_error);
  CHECK_NOTHROW(ext4::read_indirect_blocks(i_block_of(counting(100, 12)), dev, bs, blocks, 12, 12));
}

TEST_CASE("block map memory stays bounded whatever the indirect blocks say", "[ext4][indirect]") {
  const std::uint32_t bs = 1024;
  const std::uint32_t per = bs / 4;
  MemoryDevice dev(std::uint64_t{1} << 24);
  const std::uint64_t blocks = dev.size() / bs;
  // Every entry of the single indirect block names the same block: each is
  // a run of its own, so the run cap ends it before memory grows with them.
  write_pointers(dev, 9000, bs, std::vector<std::uint32_t>(per, 7000));
  std::vector<std::uint32_t> slots(12, 7000);
  slots.push_back(9000);
  CHECK_THROWS_WITH(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, 12 + per, 12 + per, 100),
                    Catch::Contains("more than 100 runs"));
  CHECK(ext4::read_indirect_blocks(i_block_of(slots), dev, bs, blocks, 12 + per, 12 + per, 12 + per).size() ==
        12 + per);
}

}  // namespace ext4_indirect_blocks_test
