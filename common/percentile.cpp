// SPDX-License-Identifier: BSD-3-Clause
#include "common/percentile.h"

#include <algorithm>
#include <cmath>

namespace nvj {

std::uint64_t nearest_rank(double fraction, std::uint64_t count) {
  if (count == 0) return 0;
  const double exact = std::ceil(std::clamp(fraction, 0.0, 1.0) * static_cast<double>(count));
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(exact), 1, count);
}

std::uint64_t percentile(std::span<const std::uint64_t> sorted, double fraction) {
  const std::uint64_t rank = nearest_rank(fraction, sorted.size());
  return rank == 0 ? 0 : sorted[rank - 1];
}

}  // namespace nvj
