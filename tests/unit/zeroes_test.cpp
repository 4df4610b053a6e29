// SPDX-License-Identifier: BSD-3-Clause
// fscore/zeroes.h: which bytes a copy of an export may leave out, against
// a byte-by-byte count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "fscore/zeroes.h"

namespace zeroes_test {

TEST_CASE("the runs of blocks that are not all zeroes are those a byte-by-byte look finds", "[zeroes]") {
  CHECK(fscore::all_zeroes({}));
  std::mt19937_64 rng(20261129);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t block = std::size_t{1} << (rng() % 4);  // 1 to 8 bytes
    std::vector<std::uint8_t> bytes(rng() % 64);
    for (auto& b : bytes)
      if (rng() % 5 == 0) b = static_cast<std::uint8_t>(1 + rng() % 255);
    // Each block's verdict by counting its bytes, runs joined where they touch.
    std::vector<std::pair<std::size_t, std::size_t>> want;
    for (std::size_t at = 0; at < bytes.size(); at += block) {
      const std::size_t end = std::min(bytes.size(), at + block);
      std::size_t nonzero = 0;
      for (std::size_t i = at; i < end; ++i) nonzero += bytes[i] != 0;
      CHECK(fscore::all_zeroes(std::span(bytes).subspan(at, end - at)) == (nonzero == 0));
      if (nonzero == 0) continue;
      if (!want.empty() && want.back().first + want.back().second == at)
        want.back().second += end - at;
      else
        want.emplace_back(at, end - at);
    }
    std::vector<std::pair<std::size_t, std::size_t>> got;
    fscore::for_each_nonzero_run(bytes, block,
                                 [&](std::size_t from, std::size_t length) { got.emplace_back(from, length); });
    CAPTURE(round, block, bytes.size());
    CHECK(got == want);
  }
}

}  // namespace zeroes_test
