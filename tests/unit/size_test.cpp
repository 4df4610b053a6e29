// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "common/size.h"

namespace size_test {

using nvj::format_size;
using nvj::parse_size;

TEST_CASE("sizes parse with binary suffixes", "[size]") {
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("512") == 512);
  CHECK(parse_size("512b") == 512);
  CHECK(parse_size("3s") == 1536);
  CHECK(parse_size("4K") == 4096);
  CHECK(parse_size("4k") == 4096);
  CHECK(parse_size("4KiB") == 4096);
  CHECK(parse_size("64M") == 64ull << 20);
  CHECK(parse_size("1G") == 1ull << 30);
  CHECK(parse_size("1gb") == 1ull << 30);
  CHECK(parse_size("16T") == 16ull << 40);
  CHECK(parse_size("2P") == 2ull << 50);
  CHECK(parse_size("15E") == 15ull << 60);
  CHECK(parse_size("18446744073709551615") == ~0ull);
}

TEST_CASE("bad sizes say what is wrong", "[size]") {
  auto why = [](const char* text) {
    try {
      parse_size(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(why(""), Catch::Contains("empty"));
  CHECK_THAT(why("-1"), Catch::Contains("negative"));
  CHECK_THAT(why("G"), Catch::Contains("no number"));
  CHECK_THAT(why("12Q"), Catch::Contains("unknown suffix 'Q'"));
  CHECK_THAT(why("1.5G"), Catch::Contains("unknown suffix '.5G'"));
  CHECK_THAT(why("1 G"), Catch::Contains("unknown suffix"));
  CHECK_THAT(why("1bib"), Catch::Contains("unknown suffix"));
  CHECK_THAT(why("16E"), Catch::Contains("too large"));
  CHECK_THAT(why("18446744073709551616"), Catch::Contains("too large"));
  CHECK_THAT(why("12Q"), Catch::Contains("'12Q' is not a size"));
}

TEST_CASE("sizes format exactly", "[size]") {
  CHECK(format_size(0) == "0 bytes");
  CHECK(format_size(1) == "1 byte");
  CHECK(format_size(1000) == "1000 bytes");
  CHECK(format_size(1536 * 1024) == "1536 KiB");
  CHECK(format_size(64ull << 20) == "64 MiB");
  CHECK(format_size(1ull << 30) == "1 GiB");
  CHECK(format_size(8ull << 60) == "8 EiB");
}

}  // namespace size_test
