// SPDX-License-Identifier: BSD-3-Clause
// Durations: parsed with their units, formatted, and the time a transfer
// takes at a bandwidth.
#include <catch2/catch.hpp>

#include "common/duration.h"

namespace duration_test {

using nvj::format_duration;
using nvj::parse_duration;
using nvj::transfer_time;

TEST_CASE("durations parse with units and bad ones say why", "[duration]") {
  CHECK(parse_duration("2us") == 2000);
  CHECK(parse_duration("1.5ms") == 1'500'000);
  CHECK(parse_duration("100ns") == 100);
  CHECK(parse_duration("0s") == 0);
  CHECK(parse_duration("0.25s") == 250'000'000);
  CHECK_THROWS_WITH(parse_duration(""), Catch::Contains("empty"));
  CHECK_THROWS_WITH(parse_duration("-1us"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(parse_duration("5"), Catch::Contains("no unit"));
  CHECK_THROWS_WITH(parse_duration("5sec"), Catch::Contains("unknown unit 'sec'"));
  CHECK_THROWS_WITH(parse_duration("2h"), Catch::Contains("unknown unit 'h'"));
  CHECK_THROWS_WITH(parse_duration("4000s"), Catch::Contains("longer than an hour"));
  CHECK(format_duration(800) == "800 ns");
  CHECK(format_duration(2000) == "2 us");
  CHECK(format_duration(8'500'000) == "8.5 ms");
  CHECK(transfer_time(4096, 4096ull * 1000) == 1'000'000);
  CHECK(transfer_time(1, 3) == 333'333'334);  // rounded up
  CHECK(transfer_time(123, 0) == 0);
}

TEST_CASE("wall-clock times parse as seconds or with s, m, h, and bad ones say why", "[duration]") {
  using nvj::parse_wall_duration;
  CHECK(parse_wall_duration("90") == 90'000'000'000);
  CHECK(parse_wall_duration("90s") == 90'000'000'000);
  CHECK(parse_wall_duration("2.5m") == 150'000'000'000);
  CHECK(parse_wall_duration("1h") == 3'600'000'000'000);
  CHECK_THROWS_WITH(parse_wall_duration(""), Catch::Contains("is not a time (empty"));
  CHECK_THROWS_WITH(parse_wall_duration("-5"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(parse_wall_duration("1.2.3s"), Catch::Contains("bad number"));
  CHECK_THROWS_WITH(parse_wall_duration("10ms"), Catch::Contains("unknown unit 'ms'"));
  CHECK_THROWS_WITH(parse_wall_duration("31d"), Catch::Contains("unknown unit 'd'"));
  CHECK_THROWS_WITH(parse_wall_duration("721h"), Catch::Contains("longer than 30 days"));
  CHECK_THROWS_WITH(parse_duration("1.2.3us"), Catch::Contains("is not a duration (bad number"));
}

}  // namespace duration_test
