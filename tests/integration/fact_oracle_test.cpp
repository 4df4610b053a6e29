// FactOracle (crashlab/fact_oracle.h): facts folded in mark order and
// checked against an ext4 image e2fsprogs made (mke2fs, debugfs), read with
// TreeReader: what holds passes, and each kind of fact fails when the image
// does not hold it, naming the path, what was expected and what was found.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/ext4/tree_reader.h"
#include "crashlab/fact_oracle.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/file_image.h"
#include "tools/nvj/host/process.h"

using fscore::record::Fact;
using fscore::record::FactKind;
using crashlab::FactOracle;
using crashlab::FactViolation;
using fscore::record::parse_fact;

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
  FactOracle oracle;
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
