// SPDX-License-Identifier: BSD-3-Clause
// Extent trees, built into an in-memory device and read back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/extent_tree.h"
#include "tests/support/sparse_image.h"

namespace ext4_extent_tree_test {

using fscore::ext4::Extent;
using fscore::ext4::ExtentTree;

namespace {

namespace ext4 = fscore::ext4;

// A device of `size` bytes that reads zeros where nothing was written,
// stored as the byte ranges written (whole blocks here).
using MemoryDevice = nvj::test::SparseImage;

struct Built {
  ExtentTree tree;
  std::vector<std::uint64_t> allocated;
};

// `count` extents of `length` blocks each, every other run of the device:
// they never merge, so each stays an extent of its own.
std::vector<Extent> scattered(std::size_t count, std::uint32_t length, std::uint64_t first_physical) {
  std::vector<Extent> v;
  std::uint32_t logical = 0;
  std::uint64_t physical = first_physical;
  for (std::size_t i = 0; i < count; ++i) {
    v.push_back({logical, physical, length});
    logical += length;
    physical += 2 * std::uint64_t{length};
  }
  return v;
}

Built build(const std::vector<Extent>& extents, std::uint32_t block_size, MemoryDevice& dev, std::uint64_t next_block) {
  Built b;
  b.tree = ext4::build_extent_tree(extents, block_size, 12, 34, 0xABCDEF01u, [&] {
    b.allocated.push_back(next_block);
    return next_block++;
  });
  for (const auto& [block, bytes] : b.tree.blocks) dev.write(block * block_size, bytes);
  return b;
}

int root_depth(const ExtentTree& t) { return fscore::load_le<std::uint16_t>(t.root.data() + 6); }
std::size_t root_entries(const ExtentTree& t) { return fscore::load_le<std::uint16_t>(t.root.data() + 2); }

void check_equal(const std::vector<Extent>& got, const std::vector<Extent>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].logical == want[i].logical);
    CHECK(got[i].physical == want[i].physical);
    CHECK(got[i].length == want[i].length);
  }
}

std::uint32_t tree_seed(std::uint32_t fs_seed, std::uint32_t ino, std::uint32_t generation) {
  std::uint8_t word[4];
  fscore::store_le<std::uint32_t>(word, ino);
  std::uint32_t crc = fscore::crc32c(fs_seed, word, 4);
  fscore::store_le<std::uint32_t>(word, generation);
  return fscore::crc32c(crc, word, 4);
}

}  // namespace

TEST_CASE("extent tree of up to 4 extents lives in the inode", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{4}}) {
    CAPTURE(count);
    const std::vector<Extent> extents = scattered(count, 100, 5000);
    const Built b = build(extents, 4096, dev, 100);
    CHECK(b.tree.blocks.empty());
    CHECK(b.allocated.empty());
    CHECK(root_depth(b.tree) == 0);
    CHECK(root_entries(b.tree) == count);
    CHECK(fscore::load_le<std::uint16_t>(b.tree.root.data()) == ext4::kExtentMagic);
    CHECK(fscore::load_le<std::uint16_t>(b.tree.root.data() + 4) == 4u);  // eh_max of the root
    check_equal(ext4::read_extent_tree(b.tree.root, dev, 4096, dev.size() / 4096, 100), extents);
    CHECK(ext4::extent_tree_blocks(count, 4096) == 0u);
  }
}

TEST_CASE("extent tree of depth 1 puts the extents in leaf blocks", "[ext4][extent_tree]") {
  const std::uint32_t bs = 4096;
  const std::uint32_t per_leaf = (bs - 12) / 12;  // 340
  MemoryDevice dev(std::uint64_t{1} << 32);
  for (std::size_t count : {std::size_t{5}, std::size_t{per_leaf}, std::size_t{per_leaf + 1}, std::size_t{4 * per_leaf}}) {
    CAPTURE(count);
    const std::vector<Extent> extents = scattered(count, 8, 100000);
    const Built b = build(extents, bs, dev, 1000);
    CHECK(root_depth(b.tree) == 1);
    const std::size_t leaves = (count + per_leaf - 1) / per_leaf;
    CHECK(b.tree.blocks.size() == leaves);
    CHECK(root_entries(b.tree) == leaves);
    CHECK(ext4::extent_tree_blocks(count, bs) == leaves);
    check_equal(ext4::read_extent_tree(b.tree.root, dev, bs, dev.size() / bs, 100000), extents);
  }
}

TEST_CASE("extent tree of depth 2 with 1 KiB blocks reads back", "[ext4][extent_tree]") {
  const std::uint32_t bs = 1024;
  const std::uint32_t per_node = (bs - 12) / 12;  // 84
  const std::size_t count = 4 * per_node + 500;   // more than four leaves can hold
  MemoryDevice dev(std::uint64_t{1} << 31);
  const std::vector<Extent> extents = scattered(count, 3, 50000);
  const Built b = build(extents, bs, dev, 10);
  CHECK(root_depth(b.tree) == 2);
  const std::size_t leaves = (count + per_node - 1) / per_node;
  const std::size_t index_nodes = (leaves + per_node - 1) / per_node;
  CHECK(b.tree.blocks.size() == leaves + index_nodes);
  CHECK(root_entries(b.tree) == index_nodes);
  CHECK(ext4::extent_tree_blocks(count, bs) == leaves + index_nodes);
  CHECK(b.allocated.size() == b.tree.blocks.size());
  check_equal(ext4::read_extent_tree(b.tree.root, dev, bs, dev.size() / bs, count), extents);
  // One read per tree block.
  CHECK(dev.reads() == leaves + index_nodes);
}

TEST_CASE("extent tree blocks carry a header and a checksum of the inode's seed", "[ext4][extent_tree]") {
  const std::uint32_t bs = 1024;
  MemoryDevice dev(std::uint64_t{1} << 30);
  const Built b = build(scattered(500, 2, 7000), bs, dev, 10);
  REQUIRE_FALSE(b.tree.blocks.empty());
  const std::uint32_t seed = tree_seed(0xABCDEF01u, 12, 34);
  const std::size_t tail = 12 + std::size_t{(bs - 12) / 12} * 12;
  for (const auto& [block, bytes] : b.tree.blocks) {
    CAPTURE(block);
    REQUIRE(bytes.size() == bs);
    CHECK(fscore::load_le<std::uint16_t>(bytes.data()) == ext4::kExtentMagic);
    CHECK(std::uint32_t{fscore::load_le<std::uint16_t>(bytes.data() + 4)} == (bs - 12) / 12);
    CHECK(fscore::load_le<std::uint32_t>(bytes.data() + tail) == fscore::crc32c(seed, bytes.data(), tail));
  }
}

TEST_CASE("extent tree splits runs longer than 32768 blocks", "[ext4][extent_tree]") {
  const std::vector<Extent> runs = {{0, 1000, 100000}, {100000, 500000, 32768}, {200000, 900000, 32769}};
  const std::vector<Extent> split = ext4::split_long_extents(runs);
  const std::vector<Extent> want = {{0, 1000, 32768},          {32768, 33768, 32768},  {65536, 66536, 32768},
                                    {98304, 99304, 1696},      {100000, 500000, 32768}, {200000, 900000, 32768},
                                    {232768, 932768, 1}};
  check_equal(split, want);

  // The builder splits them too: 7 extents, so one leaf block.
  MemoryDevice dev(std::uint64_t{1} << 33);
  const Built b = build(runs, 4096, dev, 10);
  CHECK(root_depth(b.tree) == 1);
  CHECK(b.tree.blocks.size() == 1u);
  check_equal(ext4::read_extent_tree(b.tree.root, dev, 4096, dev.size() / 4096, 100), want);

  // Four runs of 32768 blocks exactly fit the inode.
  const std::vector<Extent> four = {{0, 0, 32768}, {32768, 32768, 32768}, {65536, 65536, 32768}, {98304, 98304, 32768}};
  CHECK(ext4::split_long_extents(four).size() == 4u);
  const Built c = build(four, 4096, dev, 10);
  CHECK(root_depth(c.tree) == 0);
  check_equal(ext4::read_extent_tree(c.tree.root, dev, 4096, dev.size() / 4096, 100), four);
}

TEST_CASE("extent tree building rejects a block size ext4 does not have", "[ext4][extent_tree]") {
  const std::vector<Extent> many = scattered(10, 1, 100);
  MemoryDevice dev(std::uint64_t{1} << 24);
  for (const std::uint32_t bad : {0u, 512u, 1000u, 3072u, 131072u}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(build(many, bad, dev, 10), Catch::Contains(std::to_string(bad) + " is not a power of two"));
    CHECK_THROWS_WITH(ext4::extent_tree_blocks(10, bad), Catch::Contains("block size"));
  }
  CHECK(ext4::extent_tree_blocks(10, 1024) == 1u);
  CHECK(root_depth(build(many, 1024, dev, 10).tree) == 1);
}

TEST_CASE("extent tree reading rejects bad magic and bad headers", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  const Built small = build(scattered(3, 10, 100), 4096, dev, 10);
  const std::uint64_t blocks = dev.size() / 4096;
  auto root = small.tree.root;
  REQUIRE_NOTHROW(ext4::read_extent_tree(root, dev, 4096, blocks, 100));

  auto bad = root;
  bad[0] ^= 1;
  CHECK_THROWS_WITH(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), Catch::Contains("magic"));
  bad = root;
  fscore::store_le<std::uint16_t>(bad.data() + 4, 5);  // eh_max 5 does not fit 60 bytes
  CHECK_THROWS_AS(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), std::runtime_error);
  bad = root;
  fscore::store_le<std::uint16_t>(bad.data() + 2, 5);  // more entries than eh_max
  CHECK_THROWS_AS(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), std::runtime_error);
  bad = root;
  fscore::store_le<std::uint16_t>(bad.data() + 6, 6);  // deeper than ext4 goes
  CHECK_THROWS_WITH(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), Catch::Contains("depth"));
  bad = root;
  fscore::store_le<std::uint32_t>(bad.data() + 12 + 12, 0);  // the second extent starts at file block 0 again
  CHECK_THROWS_WITH(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), Catch::Contains("order"));
  bad = root;
  fscore::store_le<std::uint16_t>(bad.data() + 12 + 4, 0);  // an extent of no blocks
  CHECK_THROWS_AS(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), std::runtime_error);
}

TEST_CASE("extent tree reading rejects extents and indexes outside the device", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  const std::uint64_t blocks = dev.size() / 4096;  // 262144
  // The last extent ends exactly at the end: fine. One more block is not.
  std::vector<Extent> extents = {{0, 100, 10}, {10, blocks - 50, 50}};
  const Built fits = build(extents, 4096, dev, 10);
  REQUIRE_NOTHROW(ext4::read_extent_tree(fits.tree.root, dev, 4096, blocks, 100));
  CHECK_THROWS_WITH(ext4::read_extent_tree(fits.tree.root, dev, 4096, blocks - 1, 100), Catch::Contains("outside"));
  extents[1].physical = (std::uint64_t{1} << 40);  // uses ee_start_hi
  const Built far = build(extents, 4096, dev, 10);
  CHECK_THROWS_WITH(ext4::read_extent_tree(far.tree.root, dev, 4096, blocks, 100), Catch::Contains("outside"));
  CHECK(ext4::read_extent_tree(far.tree.root, dev, 4096, std::uint64_t{1} << 41, 100)[1].physical ==
        (std::uint64_t{1} << 40));

  // An index entry past the device.
  const Built deep = build(scattered(10, 1, 1000), 4096, dev, 20);
  REQUIRE(root_depth(deep.tree) == 1);
  auto bad = deep.tree.root;
  fscore::store_le<std::uint32_t>(bad.data() + 12 + 4, static_cast<std::uint32_t>(blocks));  // ei_leaf_lo
  CHECK_THROWS_WITH(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), Catch::Contains("outside"));
  // An index pointing at a block that is not a tree node.
  fscore::store_le<std::uint32_t>(bad.data() + 12 + 4, 5);
  CHECK_THROWS_WITH(ext4::read_extent_tree(bad, dev, 4096, blocks, 100), Catch::Contains("magic"));
}

TEST_CASE("extent tree reading stops at max_extents", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  const std::vector<Extent> extents = scattered(700, 1, 1000);
  const Built b = build(extents, 4096, dev, 10);
  const std::uint64_t blocks = dev.size() / 4096;
  CHECK(ext4::read_extent_tree(b.tree.root, dev, 4096, blocks, 700).size() == 700u);
  CHECK_THROWS_WITH(ext4::read_extent_tree(b.tree.root, dev, 4096, blocks, 699), Catch::Contains("699"));
  const Built root_only = build(scattered(4, 1, 1000), 4096, dev, 10);
  CHECK_THROWS_AS(ext4::read_extent_tree(root_only.tree.root, dev, 4096, blocks, 3), std::runtime_error);
}

TEST_CASE("extent tree reading rejects a child whose depth does not follow", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  const Built b = build(scattered(10, 1, 1000), 4096, dev, 30);
  REQUIRE(b.tree.blocks.size() == 1u);
  // Make the leaf claim depth 1: it is then read as an index node.
  std::vector<std::uint8_t> leaf = b.tree.blocks.front().second;
  fscore::store_le<std::uint16_t>(leaf.data() + 6, 1);
  dev.write(b.tree.blocks.front().first * 4096, leaf);
  CHECK_THROWS_WITH(ext4::read_extent_tree(b.tree.root, dev, 4096, dev.size() / 4096, 100), Catch::Contains("depth"));
}

TEST_CASE("extent tree reading treats long lengths as unwritten extents", "[ext4][extent_tree]") {
  MemoryDevice dev(std::uint64_t{1} << 30);
  const Built b = build(scattered(1, 10, 500), 4096, dev, 10);
  auto root = b.tree.root;
  fscore::store_le<std::uint16_t>(root.data() + 12 + 4, 32768 + 10);  // unwritten, 10 blocks
  const std::vector<Extent> got = ext4::read_extent_tree(root, dev, 4096, dev.size() / 4096, 10);
  REQUIRE(got.size() == 1u);
  CHECK(got[0].length == 10u);
  CHECK(got[0].physical == 500u);
}

}  // namespace ext4_extent_tree_test
