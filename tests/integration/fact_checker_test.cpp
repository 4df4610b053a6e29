// SPDX-License-Identifier: BSD-3-Clause
// FactChecker (crashlab/facts/fact_checker.h): facts folded in mark order and
// checked against an ext4 image e2fsprogs made (mke2fs, debugfs), read with
// TreeReader: what holds passes, and each kind of fact fails when the image
// does not hold it, naming the path, what was expected and what was found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "crashlab/facts/fact_checker.h"
#include "fscore/crc32c.h"
#include "fscore/ext4/tree_reader.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/files/file_image.h"
#include "tools/nvj/host/processes/process.h"

namespace fact_checker_test {

using crashlab::Fact;
using crashlab::FactKind;
using crashlab::FactChecker;
using crashlab::FactViolation;
using crashlab::parse_fact;

namespace {

const std::string kA = "the content of a\n", kB = "what b holds, renamed\n";

std::uint32_t crc(const std::string& s) { return ~fscore::crc32c(~0u, s.data(), s.size()); }

std::string file_fact(const std::string& path, const std::string& content) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc(content));
  return "fact file " + path + " size " + std::to_string(content.size()) + " crc32c " + hex;
}

// A prefix fact: the first `n` bytes of `content`.
std::string prefix_fact(const std::string& path, const std::string& content, std::size_t n) {
  return "fact prefix" + file_fact(path, content.substr(0, n)).substr(9);
}

std::vector<FactViolation> check(const fscore::ext4::TreeReader& fs, const std::vector<std::string>& labels) {
  FactChecker oracle;
  for (const std::string& label : labels) oracle.add(*parse_fact(label));
  return oracle.check(fs);
}

}  // namespace

TEST_CASE("facts are checked against a filesystem: each kind passes where it holds and fails where not", "[oracle]") {
  nvj::test::TempDir dir;
  std::ofstream(dir.file("a")) << kA;
  std::ofstream(dir.file("b")) << kB;
  const std::string image = dir.file("img");
  REQUIRE(nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", image, "16M"}).status == 0);
  std::ofstream(dir.file("script")) << "mkdir d\nwrite " << dir.file("a") << " d/a\nwrite " << dir.file("b")
                                     << " d/b.r1\nmkdir x\n";
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image}).status == 0);
  const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
  const fscore::ext4::TreeReader fs(file);

  // What holds.
  CHECK(check(fs, {file_fact("d/a", kA), "fact entry d a", "fact entry . x"}).empty());
  CHECK(check(fs, {file_fact("d/b", kB), "fact rename d/b d/b.r1"}).empty());                 // at the new name
  CHECK(check(fs, {file_fact("d/b.r1", kB), "fact rename d/b.r1 d/b.r2"}).empty());           // at the old one
  CHECK(check(fs, {file_fact("d/m", kB), "fact rename d/m d/m1", "fact rename d/m1 d/b.r1"}).empty());  // a chain
  CHECK(check(fs, {file_fact("d/b", kB), "fact rename d/b d/b.r1", "fact entry d b.r1"}).empty());  // settled
  CHECK(check(fs, {file_fact("d/a", kB), "fact rewrite d/a"}).empty());  // content no longer known
  CHECK(check(fs, {file_fact("d/gone", kA), "fact remove d/gone"}).empty());
  CHECK(check(fs, {prefix_fact("d/a", kA, 5)}).empty());            // it starts so and goes on
  CHECK(check(fs, {prefix_fact("d/a", kA, kA.size())}).empty());  // the whole of it is a prefix too

  // What does not, and how it is named.
  auto v = check(fs, {file_fact("d/a", kB)});
  REQUIRE(v.size() == 1);
  CHECK(v[0].path == "d/a");
  CHECK(v[0].expected == std::to_string(kB.size()) + " bytes, crc32c " + file_fact("d/a", kB).substr(file_fact("d/a", kB).size() - 8));
  CHECK(v[0].found.rfind(std::to_string(kA.size()) + " bytes, crc32c ", 0) == 0);
  v = check(fs, {"fact entry d c"});
  REQUIRE(v.size() == 1);
  CHECK((v[0].path == "d/c" && v[0].expected == "present" && v[0].found == "missing"));
  v = check(fs, {file_fact("d/q", kA), "fact rename d/q d/q.r1"});
  REQUIRE(v.size() == 1);
  CHECK(v[0].path == "d/q | d/q.r1");
  CHECK(v[0].found == "missing | missing");
  v = check(fs, {file_fact("d/b", kA), "fact rename d/b d/b.r1", "fact entry d b.r1"});  // settled, wrong bytes
  REQUIRE(v.size() == 1);
  CHECK(v[0].path == "d/b.r1");
  v = check(fs, {file_fact("x", kA)});
  REQUIRE(v.size() == 1);
  CHECK(v[0].found == "not a regular file");
  v = check(fs, {prefix_fact("d/a", kB, 5)});  // other first bytes
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].expected, Catch::Matches("at least 5 bytes, the first 5 with crc32c [0-9a-f]{8}"));
  CHECK_THAT(v[0].found, Catch::Matches(std::to_string(kA.size()) + " bytes, the first 5 with crc32c [0-9a-f]{8}"));
  v = check(fs, {prefix_fact("d/a", kA + "more", kA.size() + 4)});  // shorter than the prefix
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].found, Catch::StartsWith(std::to_string(kA.size()) + " bytes, crc32c "));
  v = check(fs, {prefix_fact("d/a", kA, 5), file_fact("d/a", kA + "x")});  // a file fact after it is exact
  CHECK(v.size() == 1);
  v = check(fs, {"fact rewrite d/none", "fact entry . y"});
  CHECK(v.size() == 2);
}

TEST_CASE("inode facts (mode, nlink, symlink, xattr, absent) read back by the fast path and through the kernel's view",
          "[oracle]") {
  nvj::test::TempDir dir;
  std::ofstream(dir.file("a")) << kA;
  std::ofstream(dir.file("short")) << "sixteen bytes!!!";
  std::ofstream(dir.file("long")) << std::string(1000, 'L');  // too long for the inode: in the attribute block
  const std::string image = dir.file("img");
  REQUIRE(nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-I", "256", image, "16M"}).status == 0);
  std::ofstream(dir.file("script")) << "mkdir d\nwrite " << dir.file("a") << " d/a\nwrite " << dir.file("a")
                                     << " d/big\nsymlink d/l a\nsif d/a mode 0100640\nsif d/a links_count 2\n"
                                     << "ea_set -f " << dir.file("short") << " d/a user.nvj\n"
                                     << "ea_set -f " << dir.file("long") << " d/big user.big\n";
  const auto made = nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image});
  REQUIRE(made.status == 0);
  const std::uint32_t short_crc = crc("sixteen bytes!!!"), long_crc = crc(std::string(1000, 'L'));
  char s_hex[9], l_hex[9];
  std::snprintf(s_hex, sizeof s_hex, "%08x", short_crc);
  std::snprintf(l_hex, sizeof l_hex, "%08x", long_crc);
  const std::vector<std::string> holds{"fact mode d/a file 0640",
                                       "fact nlink d/a 2",
                                       "fact mode d dir 0755",
                                       "fact symlink d/l a",
                                       std::string("fact xattr d/a user.nvj size 16 crc32c ") + s_hex,
                                       std::string("fact xattr d/big user.big size 1000 crc32c ") + l_hex,
                                       "fact noxattr d/a user.other",
                                       "fact absent d/none"};
  {
    const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
    const fscore::ext4::TreeReader fs(file);
    CHECK(check(fs, holds).empty());
    // Each broken, named for what it said.
    const std::vector<std::pair<std::string, std::string>> broken{
        {"fact mode d/a file 0644", "mode"},        {"fact nlink d/a 1", "nlink"},
        {"fact mode d/l file 0777", "mode"},        {"fact symlink d/l b", "symlink"},
        {"fact symlink d/a a", "symlink"},          {"fact noxattr d/a user.nvj", "xattr"},
        {"fact xattr d/a user.nvj size 16 crc32c 00000000", "xattr"},
        {"fact xattr d/big user.nvj size 1 crc32c 00000000", "xattr"},
        {"fact absent d/a", "absent"}};
    for (const auto& [label, what] : broken) {
      const auto v = check(fs, {label});
      INFO(label);
      REQUIRE(v.size() == 1);
      CHECK(v[0].what == what);
      CHECK(v[0].how == (what == "absent" ? "present" : "other"));
    }
    // A rewrite ends what was said of the inode; a mode fact about a missing name fails as missing.
    CHECK(check(fs, {"fact nlink d/a 7", "fact rewrite d/a"}).empty());
    const auto missing = check(fs, {"fact mode d/gone file 0644"});
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].how == "missing");
  }
  // The attribute block's checksum damaged: the fast path refuses it, as the kernel does.
  const auto stat = nvj::cli::run({"debugfs", "-R", "stat d/big", image});
  const std::size_t at = stat.output.find("File ACL: ");
  REQUIRE(at != std::string::npos);
  const std::uint64_t block = std::stoull(stat.output.substr(at + 10));
  REQUIRE(block > 0);
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(block * 4096 + 4000));
    f.put('X');
  }
  const nvj::cli::FileImage file(image, nvj::cli::FileImage::Mode::read_only);
  const fscore::ext4::TreeReader fs(file);
  FactChecker oracle;
  oracle.add(*parse_fact(std::string("fact xattr d/big user.big size 1000 crc32c ") + l_hex));
  CHECK_THROWS_WITH(oracle.check(fs), Catch::Contains("checksum does not match"));
}

}  // namespace fact_checker_test
