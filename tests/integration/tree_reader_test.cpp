// SPDX-License-Identifier: BSD-3-Clause
// TreeReader (fscore/ext4/tree_reader.h) on images made by e2fsprogs itself:
// mke2fs (ext4 with extents, ext3 with block maps), files written by
// debugfs, a directory of 2000 names that e2fsck -D turns into an htree, a
// file of unwritten (fallocated) blocks. Every file reads back as written,
// every name is found, and what is not there is not found. Names hash as
// debugfs's dx_hash hashes them, and an htree lookup goes by the hash as the
// kernel's does: a name its index points away from is not found, a root the
// kernel gives up on is searched block by block.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "fscore/ext4/dir_hash.h"
#include "fscore/ext4/tree_reader.h"
#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/files/file_image.h"
#include "tools/nvj/host/processes/process.h"

namespace tree_reader_test {

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

// An ext4 without metadata_csum (blocks of `block_size`, `size` in all)
// whose directory "many" got `names` files holding `bytes`, those from
// `kept` on removed again.
std::string many_image(const TempDir& dir, const std::vector<std::uint8_t>& bytes, const std::string& block_size,
                       const std::string& size, int names, int kept) {
  write_file(dir.file("tiny"), bytes);
  const std::string image = dir.file("img");
  REQUIRE(nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", "-O", "^metadata_csum", "-b", block_size, image, size}).status == 0);
  std::ofstream script(dir.file("script"));
  script << "mkdir many\n";
  for (int i = 0; i < names; ++i) script << "write " << dir.file("tiny") << " many/" << many_name(i) << "\n";
  for (int i = kept; i < names; ++i) script << "rm many/" << many_name(i) << "\n";
  script.close();
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image}).status == 0);
  return image;
}

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
  const std::string image = many_image(dir, tiny, "65536", "256M", 1200, 900);
  const auto r = nvj::cli::run({"e2fsck", "-fn", image});
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

TEST_CASE("names hash as debugfs's dx_hash hashes them: every version, signed and unsigned chars, both seeds", "[tree][htree]") {
  // debugfs (e2fsprogs' ext2fs_dirhash2) is the independent truth; the
  // names: every length class of the three hashes' blocks, bytes past 0x7f
  // (where signed and unsigned chars differ).
  TempDir dir;
  std::mt19937_64 rng(7);
  std::vector<std::string> names;
  for (const std::size_t length : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 15u, 16u, 17u, 31u, 32u, 33u, 48u, 64u, 65u, 100u, 200u, 255u}) {
    std::string name;
    for (std::size_t i = 0; i < length; ++i) {
      const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
      name += rng() % 3 == 0 ? static_cast<char>(0x80 + rng() % 0x7f) : plain[rng() % (sizeof(plain) - 1)];
    }
    names.push_back(name);
  }
  const std::vector<std::string> versions = {"legacy", "half_md4", "tea", "legacy_unsigned", "half_md4_unsigned",
                                             "tea_unsigned"};
  const std::string seed_text = "a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90";
  const std::array<std::uint32_t, 4> seed = {0xd4c3b2a1, 0x1807f6e5, 0x5c4b3a29, 0x908f7e6d};  // its bytes, little-endian
  std::ofstream script(dir.file("script"));
  for (const std::string& v : versions)
    for (const bool seeded : {false, true})
      for (const std::string& name : names)  // by number: debugfs names the signed ones only
        script << "dx_hash -h " << (&v - versions.data()) << (seeded ? " -s " + seed_text : "") << " " << name << "\n";
  script.close();
  const auto r = nvj::cli::run({"debugfs", "-f", dir.file("script"), "/dev/null"});
  std::istringstream lines(r.output);
  std::string line;
  std::size_t i = 0, compared = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("Hash of ", 0) != 0) continue;
    const std::size_t version = i / (2 * names.size()), n = i % names.size();
    const bool seeded = (i / names.size()) % 2 == 1;
    ++i;
    CAPTURE(versions.at(version), seeded, names.at(n).size());
    const std::uint32_t expected = static_cast<std::uint32_t>(std::stoul(line.substr(line.find(" is 0x") + 4), nullptr, 16));
    const auto got = ext4::dir_hash(static_cast<std::uint8_t>(version), seeded ? seed : std::array<std::uint32_t, 4>{},
                                    names.at(n));
    REQUIRE(got);
    CHECK(*got == (expected & ~1u));
    ++compared;
  }
  CHECK(compared == versions.size() * 2 * names.size());
  CHECK_FALSE(ext4::dir_hash(6, {}, "siphash needs a key").has_value());
}

TEST_CASE("an htree name is looked up by its hash, as the kernel looks it up; a root that does not hold falls back", "[tree][htree]") {
  // Without metadata_csum, so that the index can be changed in place: the
  // root's entries 1 and 2 (each a leaf and the lowest hash it holds)
  // swap their leaves. A name of entry 1's leaf is then looked for in
  // entry 2's, and not found, as ext4_dx_find_entry does not find it; the
  // listing (every block) still has it. A root of an unknown hash version
  // makes the kernel give up on the index and search every block: found.
  TempDir dir;
  const std::string image = many_image(dir, random_bytes(3, 3), "4096", "64M", 2000, 2000);
  REQUIRE(nvj::cli::run({"e2fsck", "-fyD", image}).status <= 1);
  std::uint64_t root_block = 0;
  std::vector<std::string> names;
  {
    const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
    const ext4::TreeReader reader(file);
    const auto many = reader.lookup("many");
    REQUIRE(many);
    REQUIRE((many->inode.flags & 0x1000) != 0);
    for (int i = 0; i < 2000; ++i) REQUIRE(reader.lookup("many/" + many_name(i)));
    for (const auto& x : reader.extents(*many, 4096))
      if (x.logical == 0) root_block = x.physical;
    for (const auto& e : reader.entries(*many)) names.push_back(e.name);
  }
  REQUIRE(root_block != 0);
  std::vector<std::uint8_t> bytes = nvj::test::file_bytes(image);
  std::uint8_t* root = bytes.data() + root_block * 4096;
  const std::size_t entries = 24 + root[29];  // after dx_root_info, info_length bytes long
  REQUIRE(root[30] == 0);                      // one level: the root's entries name leaves
  REQUIRE(fscore::load_le<std::uint16_t>(root + entries + 2) >= 3);  // count
  for (std::size_t k = 0; k < 4; ++k) std::swap(root[entries + 8 + 4 + k], root[entries + 16 + 4 + k]);
  write_file(image, bytes);
  std::size_t missed = 0;
  {
    const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
    const ext4::TreeReader reader(file);
    const auto many = reader.lookup("many");
    CHECK(reader.entries(*many).size() == 2000);  // the listing reads every block
    for (const std::string& name : names) missed += !reader.lookup("many/" + name).has_value();
  }
  CHECK(missed > 0);
  CHECK(missed < 2000);
  root[28] = 9;  // no hash version the kernel knows: ERR_BAD_DX_DIR, every block searched
  write_file(image, bytes);
  const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
  const ext4::TreeReader reader(file);
  for (const std::string& name : names) REQUIRE(reader.lookup("many/" + name));
}

}  // namespace tree_reader_test
