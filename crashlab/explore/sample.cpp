// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/explore/sample.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace crashlab::explore {

namespace {

// Uniform in 0..bound-1 (bound > 0), without the modulo's bias: draws below
// 2^64 mod bound are drawn again.
std::uint64_t below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= threshold) return x % bound;
  }
}

}  // namespace

std::vector<std::uint64_t> sample_ordinals(std::uint64_t count, std::uint64_t n, std::uint64_t seed) {
  if (n == 0 || n > count)
    throw std::invalid_argument("a sample of " + std::to_string(n) + " of " + std::to_string(count) +
                                " workloads: expected 1 to " + std::to_string(count));
  std::mt19937_64 rng(seed);
  std::unordered_set<std::uint64_t> chosen;
  chosen.reserve(n);
  for (std::uint64_t j = count - n; j < count; ++j) {
    const std::uint64_t t = below(rng, j + 1);
    chosen.insert(chosen.count(t) != 0 ? j : t);
  }
  std::vector<std::uint64_t> out(chosen.begin(), chosen.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace crashlab::explore
