// SPDX-License-Identifier: BSD-3-Clause
// fscore's ext4 geometry against the real mke2fs: the same sizes through
// `mke2fs -t ext4 -O ^resize_inode` on sparse files, read back with
// `dumpe2fs -h`, must give the same blocks, groups, inodes and journal size.
#include <catch2/catch.hpp>

#include <string>

#include "fscore/ext4/geometry.h"
#include "server_fixture.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"

namespace ext4_geometry_test {

using fscore::ext4::GeometryRequest;
using fscore::ext4::plan_geometry;
using nvj::test::TempDir;

namespace {

std::uint64_t field(const std::string& dump, const std::string& name) {
  const auto m = nvj::cli::TextPattern('\n' + name + ":\\s+(\\d+)").search(dump);
  REQUIRE(m.has_value());
  return std::stoull(m->groups[1]);
}


std::string mke2fs(const TempDir& dir, std::uint64_t bytes, std::uint32_t block_size) {
  const std::string image = dir.file("fs.img");
  std::filesystem::remove(image);
  { std::ofstream(image, std::ios::binary); }
  std::filesystem::resize_file(image, bytes);
  std::vector<std::string> argv{"mke2fs", "-q", "-F", "-t", "ext4", "-O", "^resize_inode", "-E",
                                "lazy_itable_init=1,lazy_journal_init=1,nodiscard"};
  if (block_size != 0) {
    argv.emplace_back("-b");
    argv.push_back(std::to_string(block_size));
  }
  argv.push_back(image);
  nvj::cli::run_checked(argv);
  return '\n' + nvj::cli::run_checked({"dumpe2fs", "-h", image});
}

}  // namespace

TEST_CASE("ext4 geometry matches mke2fs", "[ext4][geometry]") {
  INFO("mke2fs and dumpe2fs come from e2fsprogs, which ./run installs");
  REQUIRE_FALSE(nvj::cli::which("mke2fs").empty());
  TempDir dir;
  struct Case {
    std::uint64_t bytes;
    std::uint32_t block_size;
  };
  const Case cases[] = {
      {8ull << 20, 0},          {20ull << 20, 0},           {100ull << 20, 0},  {511ull << 20, 0},
      {512ull << 20, 0},        {1ull << 30, 0},            {(1ull << 30) + 12345 * 4096ull, 0},
      {(1ull << 30) + 30 * 4096ull, 0},  // a last group too small: dropped
      {5ull << 30, 0},          {64ull << 30, 0},           {200ull << 20, 4096}, {1ull << 30, 1024},
      {300ull << 20, 2048},
  };
  for (const auto& c : cases) {
    INFO("bytes " << c.bytes << ", block size " << c.block_size);
    const auto g = plan_geometry(GeometryRequest{c.bytes, c.block_size});
    const std::string dump = mke2fs(dir, c.bytes, c.block_size);
    CHECK(g.block_size == field(dump, "Block size"));
    CHECK(g.blocks == field(dump, "Block count"));
    CHECK(g.first_data_block == field(dump, "First block"));
    CHECK(g.blocks_per_group == field(dump, "Blocks per group"));
    CHECK(g.inodes == field(dump, "Inode count"));
    CHECK(g.inodes_per_group == field(dump, "Inodes per group"));
    CHECK(g.inode_size == field(dump, "Inode size"));
    CHECK(g.inode_table_blocks == field(dump, "Inode blocks per group"));
    CHECK(g.flex_bg_size == field(dump, "Flex block group size"));
    CHECK(fscore::ext4::default_journal_blocks(g.blocks) == field(dump, "Total journal blocks"));
  }
}

TEST_CASE("ext4 geometry refuses what ext4 cannot be", "[ext4][geometry]") {
  CHECK_THROWS_WITH(plan_geometry(GeometryRequest{4096, 0}), "the device is too small for ext4");
  CHECK_THROWS_WITH(plan_geometry(GeometryRequest{1 << 30, 8192}), Catch::Contains("takes 1024, 2048 or 4096"));
  GeometryRequest bad_inode{1 << 30, 4096};
  bad_inode.inode_size = 300;
  CHECK_THROWS_WITH(plan_geometry(bad_inode), Catch::Contains("a power of two from 128"));
  const auto g = plan_geometry(GeometryRequest{1 << 30, 0});
  CHECK(g.has_super(0));
  CHECK(g.has_super(1));
  CHECK(g.has_super(3));
  CHECK(g.has_super(25));
  CHECK(g.has_super(49));
  CHECK_FALSE(g.has_super(2));
  CHECK_FALSE(g.has_super(6));
  CHECK(g.group_blocks(g.groups - 1) <= g.blocks_per_group);
}

}  // namespace ext4_geometry_test
