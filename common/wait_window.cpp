// SPDX-License-Identifier: BSD-3-Clause
#include "common/wait_window.h"

#include <algorithm>

namespace nvj {

void WaitWindow::learn(Nanos late) {
  spun_in_a_row_.store(0, std::memory_order_relaxed);
  late = std::max<Nanos>(late, 0);
  const Nanos old = mean_.load(std::memory_order_relaxed);
  const Nanos mean = old + (late - old) / 16;
  mean_.store(mean, std::memory_order_relaxed);
  const std::uint64_t n = seen_.fetch_add(1, std::memory_order_relaxed) + 1;
  recent_[(n - 1) % kRecent].store(late, std::memory_order_relaxed);
  if (n < kWarmUp) return;

  std::array<Nanos, kRecent> v{};
  const auto count = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(n, kRecent));
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) v[i] = recent_[i].load(std::memory_order_relaxed);
  // The second largest of 32 (the largest of fewer): about the 97th percentile.
  const std::ptrdiff_t rank = count == kRecent ? count - 2 : count - 1;
  std::nth_element(v.begin(), v.begin() + rank, v.begin() + count);
  const Nanos tail = v[static_cast<std::size_t>(rank)] + kMargin;
  window_.store(std::clamp(std::max(2 * mean, tail), floor_, kCeiling), std::memory_order_relaxed);
}

void WaitWindow::spun_through(Nanos length) {
  if (length <= floor_) return;  // it would have spun whatever was learned
  if (spun_in_a_row_.fetch_add(1, std::memory_order_relaxed) + 1 < kRecent) return;
  spun_in_a_row_.store(0, std::memory_order_relaxed);
  mean_.store(0, std::memory_order_relaxed);
  seen_.store(0, std::memory_order_relaxed);
  window_.store(std::max(floor_, kFirst), std::memory_order_relaxed);
}

}  // namespace nvj
