// SPDX-License-Identifier: BSD-3-Clause
// TreeReader (fscore/ext4/tree_reader.h) on images made by e2fsprogs itself:
// mke2fs (ext4 with extents, ext3 with block maps), files written by
// debugfs, a directory of 2000 names that e2fsck -D turns into an htree, a
// file of unwritten (fallocated) blocks. Every file reads back as written,
// every name is found, and what is not there is not found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "fscore/ext4/tree_reader.h"
#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/file_image.h"
#include "tools/nvj/host/process.h"

namespace ext4 = fscore::ext4;
using nvj::test::TempDir;

namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

std::string many_name(int i) { return "a-rather-long-name-so-that-the-directory-needs-blocks-" + std::to_string(i); }

}  // namespace

TEST_CASE("TreeReader reads back what e2fsprogs wrote: extents, block maps, htree, unwritten blocks", "[tree]") {
  for (const std::string type : {"ext4", "ext3"}) {
    CAPTURE(type);
    TempDir dir;
    const auto small = random_bytes(12345, 1), big = random_bytes(3 << 20, 2), tiny = random_bytes(3, 3);
    write_file(dir.file("small"), small);
    write_file(dir.file("big"), big);
    write_file(dir.file("tiny"), tiny);
    const std::string image = dir.file("img");
    auto r = nvj::cli::run({"mke2fs", "-q", "-F", "-t", type, "-b", "4096", image, "64M"});
    REQUIRE(r.status == 0);
    std::ofstream script(dir.file("script"));
    script << "mkdir d\nwrite " << dir.file("small") << " d/small\nwrite " << dir.file("big") << " d/big\n"
           << "mkdir d/e\nwrite " << dir.file("tiny") << " d/e/tiny\nmkdir many\n";
    for (int i = 0; i < 2000; ++i) script << "write " << dir.file("tiny") << " many/" << many_name(i) << "\n";
    // Unwritten blocks that hold bytes (0x55) on the disk: they must still read as zeroes.
    if (type == "ext4") script << "write /dev/null u\nfallocate /u 0 3\nsif /u size 16384\nzap_block -f /u -p 85 0\n";
    script.close();
    r = nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image});
    REQUIRE(r.status == 0);
    r = nvj::cli::run({"e2fsck", "-fyD", image});  // -D: large directories get their htree index
    INFO(r.output);
    REQUIRE(r.status <= 1);

    const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
    const ext4::TreeReader reader(file);
    const auto found_small = reader.lookup("d/small");
    REQUIRE(found_small);
    CHECK(reader.contents(*found_small) == small);
    const auto found_big = reader.lookup("/d/big");
    REQUIRE(found_big);
    CHECK(reader.contents(*found_big) == big);
    CHECK(reader.contents(*reader.lookup("d/./e/tiny")) == tiny);
    const auto many = reader.lookup("many");
    REQUIRE(many);
    if (type == "ext4") CHECK((many->inode.flags & 0x1000) != 0);  // EXT4_INDEX_FL: an htree directory
    const auto names = reader.entries(*many);
    CHECK(names.size() == 2000);
    for (int i : {0, 999, 1999}) {
      const auto f = reader.lookup("many/" + many_name(i));
      REQUIRE(f);
      CHECK(reader.contents(*f) == tiny);
    }
    if (type == "ext4") {
      const auto u = reader.lookup("u");
      REQUIRE(u);
      CHECK(reader.contents(*u) == std::vector<std::uint8_t>(16384, 0));  // unwritten: zeroes
    }
    CHECK_FALSE(reader.lookup("d/none").has_value());
    CHECK_FALSE(reader.lookup("d/small/x").has_value());  // a file named as a directory
    CHECK_FALSE(reader.lookup("many/" + many_name(2000)).has_value());
    CHECK(reader.lookup("")->ino == 2);
    CHECK_THROWS_WITH(reader.contents(*found_big, 1000), Catch::Contains("more than 1000"));
  }
}

TEST_CASE("TreeReader reads 64 KiB blocks: a record length of 0 is the whole block", "[tree]") {
  // A directory's second block emptied: its one unused entry spans the
  // block, 65536 bytes, which 16 bits cannot hold (e2fsprogs writes 0).
  TempDir dir;
  const auto tiny = random_bytes(3, 3);
  write_file(dir.file("tiny"), tiny);
  const std::string image = dir.file("img");
  auto r = nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", "-O", "^metadata_csum", "-b", "65536", image, "256M"});
  REQUIRE(r.status == 0);
  std::ofstream script(dir.file("script"));
  script << "mkdir many\n";
  for (int i = 0; i < 1200; ++i) script << "write " << dir.file("tiny") << " many/" << many_name(i) << "\n";
  for (int i = 900; i < 1200; ++i) script << "rm many/" << many_name(i) << "\n";
  script.close();
  r = nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image});
  REQUIRE(r.status == 0);
  r = nvj::cli::run({"e2fsck", "-fn", image});
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
  const ext4::TreeReader reader(file);
  const auto many = reader.lookup("many");
  REQUIRE(many);
  REQUIRE(many->inode.size == 2 * 65536);
  CHECK(reader.entries(*many).size() == 900);
  CHECK(reader.contents(*reader.lookup("many/" + many_name(899))) == tiny);
  CHECK_FALSE(reader.lookup("many/" + many_name(900)).has_value());
}

namespace {

// The number after `key` on the first line of `text` that has it.
std::uint64_t number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) throw std::runtime_error("no '" + key + "' in: " + text);
  return std::stoull(text.substr(at + key.size()));
}

// A copy of `image` with one byte of block `block` (4 KiB) at `offset` changed.
std::string damaged(const TempDir& dir, const std::string& image, const std::string& name, std::uint64_t block,
                    std::uint64_t offset) {
  std::vector<std::uint8_t> bytes = nvj::test::file_bytes(image);
  bytes.at(block * 4096 + offset) ^= 0x5A;
  const std::string copy = dir.file(name);
  write_file(copy, bytes);
  return copy;
}

}  // namespace

TEST_CASE("TreeReader refuses what the kernel and e2fsck refuse: damaged directory, htree and extent blocks, deleted inodes", "[tree]") {
  TempDir dir;
  write_file(dir.file("tiny"), random_bytes(3, 3));
  {  // A file of 8 blocks 64 KiB apart: 8 extents, a tree block of its own.
    std::vector<std::uint8_t> frag(8 * 65536, 0);
    for (std::size_t i = 0; i < 8; ++i) std::fill_n(frag.begin() + static_cast<std::ptrdiff_t>(i * 65536), 4096, i + 1);
    write_file(dir.file("frag"), frag);
  }
  const std::string image = dir.file("img");
  REQUIRE(nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", image, "64M"}).status == 0);
  std::ofstream script(dir.file("script"));
  script << "mkdir d\nwrite " << dir.file("tiny") << " d/t\nmkdir many\nwrite " << dir.file("frag") << " frag\n";
  for (int i = 0; i < 2000; ++i) script << "write " << dir.file("tiny") << " many/" << many_name(i) << "\n";
  script.close();
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image}).status == 0);
  REQUIRE(nvj::cli::run({"e2fsck", "-fyD", image}).status <= 1);
  REQUIRE(nvj::cli::run({"e2fsck", "-fn", image}).status == 0);
  const auto debugfs = [&](const std::string& request, const std::string& img) {
    return nvj::cli::run({"debugfs", "-R", request, img}).output;
  };
  const std::uint64_t d_leaf = number_after(debugfs("bmap d 0", image), "\n");     // its one block
  const std::uint64_t root = number_after(debugfs("bmap many 0", image), "\n");    // block 0: the htree root
  const std::uint64_t tree_block = number_after(debugfs("stat frag", image), "(ETB0):");  // the extent tree's leaf
  {
    const nvj::cli::FileImage whole(image, nvj::cli::FileImage::Mode::read_only);
    const ext4::TreeReader reader(whole);
    REQUIRE(reader.lookup("d/t"));
    REQUIRE(reader.lookup("many/" + many_name(7)));
    REQUIRE(reader.contents(*reader.lookup("frag")).size() == 8 * 65536);
  }
  struct Damage {
    const char* name;
    std::uint64_t block, offset;
    std::function<void(const ext4::TreeReader&)> read;
    const char* error;
  };
  const std::vector<Damage> damages{
      {"leaf", d_leaf, 2000, [](const ext4::TreeReader& r) { r.lookup("d/t"); }, ": checksum does not match"},
      {"htree root", root, 100, [](const ext4::TreeReader& r) { r.lookup("many/" + many_name(7)); },
       "htree index checksum does not match"},
      {"extent block", tree_block, 3000, [](const ext4::TreeReader& r) { r.contents(*r.lookup("frag")); },
       ": checksum does not match"},
  };
  for (const Damage& d : damages) {
    CAPTURE(d.name, d.block);
    const std::string copy = damaged(dir, image, d.name, d.block, d.offset);
    const nvj::cli::FileImage file(copy, nvj::cli::FileImage::Mode::read_only);
    const ext4::TreeReader reader(file);
    CHECK_THROWS_WITH(d.read(reader), Catch::Contains(d.error));
    const auto fsck = nvj::cli::run({"e2fsck", "-fn", copy});
    INFO(fsck.output);
    CHECK(fsck.status >= 4);  // e2fsck finds the damage too: errors left uncorrected
  }
  // An entry naming an inode whose links are gone: the kernel's lookup says
  // ESTALE, e2fsck finds a deleted inode in use; never a missing name.
  const std::string unlinked = dir.file("unlinked");
  write_file(unlinked, nvj::test::file_bytes(image));
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-R", "set_inode_field d/t links_count 0", unlinked}).status == 0);
  const nvj::cli::FileImage file(unlinked, nvj::cli::FileImage::Mode::read_only);
  const ext4::TreeReader reader(file);
  CHECK_THROWS_WITH(reader.lookup("d/t"), Catch::Contains("which has no links"));
  CHECK(nvj::cli::run({"e2fsck", "-fn", unlinked}).status >= 4);
}
