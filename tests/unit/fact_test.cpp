// SPDX-License-Identifier: BSD-3-Clause
// Facts (crashlab/facts/fact.h): every kind formats to the documented line
// and parses back to itself, paths with any byte survive the escaping, a
// label that is no fact is passed over, and a malformed fact is refused
// naming what is wrong.
#include <catch2/catch.hpp>

#include <string>

#include "crashlab/facts/fact.h"

namespace fact_test {

using crashlab::Fact;
using crashlab::FactError;
using crashlab::FactKind;
using crashlab::format_fact;
using crashlab::parse_fact;

TEST_CASE("each kind of fact formats to its documented line and parses back", "[fact]") {
  const Fact file{FactKind::file, "d1/t25", "", 40960, 0x0badf00d};
  CHECK(format_fact(file) == "fact file d1/t25 size 40960 crc32c 0badf00d");
  const Fact prefix{FactKind::prefix, "d1/t25", "", 4096, 0x00c0ffee};
  CHECK(format_fact(prefix) == "fact prefix d1/t25 size 4096 crc32c 00c0ffee");
  const Fact entry{FactKind::entry, "d0", "p3-7.r3", 0, 0};
  CHECK(format_fact(entry) == "fact entry d0 p3-7.r3");
  const Fact root_entry{FactKind::entry, ".", "top", 0, 0};
  CHECK(format_fact(root_entry) == "fact entry . top");
  const Fact rename{FactKind::rename, "d0/p3-7", "d0/p3-7.r1", 0, 0};
  CHECK(format_fact(rename) == "fact rename d0/p3-7 d0/p3-7.r1");
  const Fact rewrite{FactKind::rewrite, "d1/t25", "", 0, 0};
  CHECK(format_fact(rewrite) == "fact rewrite d1/t25");
  const Fact remove{FactKind::remove, "d0/p3-0.r3", "", 0, 0};
  CHECK(format_fact(remove) == "fact remove d0/p3-0.r3");
  const Fact absent{FactKind::absent, "A/bar", "", 0, 0};
  CHECK(format_fact(absent) == "fact absent A/bar");
  const Fact mode{FactKind::mode, "A/foo", "file", 0644, 0};
  CHECK(format_fact(mode) == "fact mode A/foo file 0644");
  const Fact nlink{FactKind::nlink, "A/foo", "", 2, 0};
  CHECK(format_fact(nlink) == "fact nlink A/foo 2");
  const Fact symlink{FactKind::symlink, "B/bar", "../A/foo", 0, 0};
  CHECK(format_fact(symlink) == "fact symlink B/bar ../A/foo");
  const Fact xattr{FactKind::xattr, "A/foo", "user.nvj", 16, 0xac5adf85};
  CHECK(format_fact(xattr) == "fact xattr A/foo user.nvj size 16 crc32c ac5adf85");
  const Fact noxattr{FactKind::noxattr, "A/foo", "user.nvj", 0, 0};
  CHECK(format_fact(noxattr) == "fact noxattr A/foo user.nvj");
  const Fact nostale{FactKind::nostale, "A/foo", "", 1024, 0, {{0x930b48a4, 0x0badf00d}, {}, {0xee706702}}};
  CHECK(format_fact(nostale) == "fact nostale A/foo 1024 930b48a4/0badf00d zero ee706702");
  const Fact nostale_ends{FactKind::nostale, "A/foo", "", 4096, 0, {}};
  CHECK(format_fact(nostale_ends) == "fact nostale A/foo 4096");
  CHECK_THROWS_AS(format_fact(Fact{FactKind::nostale, "A/foo", "", 1000, 0, {}}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::nostale, "A/foo", "", 131072, 0, {}}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::mode, "A/foo", "fifo", 0644, 0}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::mode, "A/foo", "file", 010000, 0}), FactError);
  CHECK_THROWS_AS(parse_fact("fact mode A/foo file 644"), FactError);
  CHECK_THROWS_AS(parse_fact("fact mode A/foo socket 0644"), FactError);
  CHECK_THROWS_AS(parse_fact("fact nlink A/foo two"), FactError);
  CHECK_THROWS_AS(parse_fact("fact xattr A/foo user.nvj 16 ac5adf85"), FactError);
  for (const Fact& f : {file, prefix, entry, root_entry, rename, rewrite, remove, absent, mode, nlink, symlink, xattr,
                        noxattr, nostale, nostale_ends}) {
    CAPTURE(format_fact(f));
    const auto back = parse_fact(format_fact(f));
    REQUIRE(back.has_value());
    CHECK(*back == f);
  }
}

TEST_CASE("any byte of a path survives the escaping", "[fact]") {
  std::string odd = "a b%c";
  for (int c = 1; c < 256; ++c)
    if (c != '/') odd += static_cast<char>(c);
  const Fact f{FactKind::rename, "dir with space/" + odd, "caf\xc3\xa9/x", 0, 0};
  const std::string label = format_fact(f);
  CHECK(label.find("dir%20with%20space/a%20b%25c") != std::string::npos);
  CHECK(label.find("caf%C3%A9/x") != std::string::npos);
  for (const char c : label.substr(5)) CHECK((c == ' ' || (c > ' ' && c < 0x7F)));
  CHECK(parse_fact(label) == f);
  CHECK(parse_fact("fact remove caf%c3%a9")->path == "caf\xc3\xa9");  // lower-case hex too
}

TEST_CASE("a label that is no fact is passed over", "[fact]") {
  CHECK_FALSE(parse_fact("after the untar").has_value());
  CHECK_FALSE(parse_fact("facts are stubborn").has_value());
  CHECK_FALSE(parse_fact("").has_value());
}

TEST_CASE("a malformed fact is refused naming what is wrong", "[fact]") {
  const auto refused = [](const std::string& label, const std::string& what) {
    CAPTURE(label);
    CHECK_THROWS_AS(parse_fact(label), FactError);
    CHECK_THROWS_WITH(parse_fact(label), Catch::Contains(what));
  };
  refused("fact ", "an empty word");
  refused("fact file  a size 1 crc32c 00000000", "an empty word");
  refused("fact chmod a", "unknown kind 'chmod'");
  refused("fact file a size 1", "3 words after 'file', not 5");
  refused("fact file a bytes 1 crc32c 00000000", "'file PATH size BYTES crc32c HEX'");
  refused("fact file a size 1x crc32c 00000000", "a bad size '1x'");
  refused("fact file a size 99999999999999999999 crc32c 00000000", "too large");
  refused("fact file a size 1 crc32c 0000000", "a crc32c of 7 characters");
  refused("fact file a size 1 crc32c 0000000g", "not hex");
  refused("fact remove /etc/passwd", "an absolute path");
  refused("fact remove a/../b", "'..' component");
  refused("fact remove a//b", "an empty, '.' or '..' component");
  refused("fact remove .", "the root itself");
  refused("fact remove a%2", "two hex digits");
  refused("fact remove a%zz", "two hex digits");
  refused("fact remove a%00b", "NUL");
  refused("fact entry d a%2Fb", "holds '/'");
  refused("fact entry d ..", "'..'");
  refused("fact rename a ../b", "'..' component");
  refused("fact nostale a", "'nostale PATH UNIT [BLOCK]...'");
  refused("fact nostale a 1000 zero", "a unit of 1000 bytes");
  refused("fact nostale a 0", "a unit of 0 bytes");
  refused("fact nostale a 4096 0badf00d/", "a crc32c of 0 characters");
  refused("fact nostale a 4096 zeroes", "a crc32c of 6 characters");
  refused("fact nostale a 4096 0badf00d/xyz00000", "not hex");
}

TEST_CASE("a fact the format cannot hold is not formatted", "[fact]") {
  CHECK_THROWS_AS(format_fact(Fact{FactKind::file, "", "", 0, 0}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::file, "/abs", "", 0, 0}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::entry, "d", "a/b", 0, 0}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::rename, "a", "", 0, 0}), FactError);
  CHECK_THROWS_AS(format_fact(Fact{FactKind::remove, "a/./b", "", 0, 0}), FactError);
}

}  // namespace fact_test
