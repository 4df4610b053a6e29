// SPDX-License-Identifier: BSD-3-Clause
// common/percentile.h: the nearest-rank rule every report uses.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/percentile.h"

namespace percentile_test {

TEST_CASE("the nearest rank is the smallest sample with at least p% at or below it", "[percentile]") {
  CHECK(nvj::nearest_rank(0.5, 0) == 0);
  CHECK(nvj::nearest_rank(0.5, 1) == 1);
  CHECK(nvj::nearest_rank(0.0, 10) == 1);
  CHECK(nvj::nearest_rank(0.5, 10) == 5);
  CHECK(nvj::nearest_rank(0.51, 10) == 6);
  CHECK(nvj::nearest_rank(0.99, 10) == 10);
  CHECK(nvj::nearest_rank(1.0, 10) == 10);
  CHECK(nvj::nearest_rank(0.999, 1000) == 999);
  CHECK(nvj::nearest_rank(0.9, 1001) == 901);
}

TEST_CASE("percentiles of sorted samples", "[percentile]") {
  const std::vector<std::uint64_t> none;
  CHECK(nvj::percentile(none, 0.5) == 0);
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 1; i <= 100; ++i) v.push_back(i * 10);
  CHECK(nvj::percentile(v, 0.5) == 500);
  CHECK(nvj::percentile(v, 0.9) == 900);
  CHECK(nvj::percentile(v, 0.99) == 990);
  CHECK(nvj::percentile(v, 0.999) == 1000);
  CHECK(nvj::percentile(v, 0.0) == 10);
  const std::vector<std::uint64_t> two{3, 7};
  CHECK(nvj::percentile(two, 0.5) == 3);  // rank ceil(1.0) = 1, not an average
  CHECK(nvj::percentile(two, 0.51) == 7);
}

}  // namespace percentile_test
