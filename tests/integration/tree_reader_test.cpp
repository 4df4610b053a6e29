// TreeReader (fscore/ext4/tree_reader.h) on images made by e2fsprogs itself:
// mke2fs (ext4 with extents, ext3 with block maps), files written by
// debugfs, a directory of 2000 names that e2fsck -D turns into an htree, a
// file of unwritten (fallocated) blocks. Every file reads back as written,
// every name is found, and what is not there is not found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
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
    CHECK(reader.contents(found_small->inode) == small);
    const auto found_big = reader.lookup("/d/big");
    REQUIRE(found_big);
    CHECK(reader.contents(found_big->inode) == big);
    CHECK(reader.contents(reader.lookup("d/./e/tiny")->inode) == tiny);
    const auto many = reader.lookup("many");
    REQUIRE(many);
    if (type == "ext4") CHECK((many->inode.flags & 0x1000) != 0);  // EXT4_INDEX_FL: an htree directory
    const auto names = reader.entries(many->inode);
    CHECK(names.size() == 2000);
    for (int i : {0, 999, 1999}) {
      const auto f = reader.lookup("many/" + many_name(i));
      REQUIRE(f);
      CHECK(reader.contents(f->inode) == tiny);
    }
    if (type == "ext4") {
      const auto u = reader.lookup("u");
      REQUIRE(u);
      CHECK(reader.contents(u->inode) == std::vector<std::uint8_t>(16384, 0));  // unwritten: zeroes
    }
    CHECK_FALSE(reader.lookup("d/none").has_value());
    CHECK_FALSE(reader.lookup("d/small/x").has_value());  // a file named as a directory
    CHECK_FALSE(reader.lookup("many/" + many_name(2000)).has_value());
    CHECK(reader.lookup("")->ino == 2);
    CHECK_THROWS_WITH(reader.contents(found_big->inode, 1000), Catch::Contains("more than 1000"));
  }
}
