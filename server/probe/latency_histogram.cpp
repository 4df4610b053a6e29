// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/latency_histogram.h"

#include "common/percentile.h"

#include <algorithm>
#include <bit>
#include <vector>

namespace nvj {

int LatencyHistogram::bucket_of(std::uint64_t ns) {
  if (ns < kSub) return static_cast<int>(ns);
  const int msb = 63 - std::countl_zero(ns);
  if (msb > 40) return kBuckets - 1;
  const int shift = msb - kSubBits;
  const auto sub = static_cast<int>((ns >> shift) & (kSub - 1));
  return (shift + 1) * kSub + sub;
}

std::uint64_t LatencyHistogram::bucket_low(int bucket) {
  if (bucket < kSub) return static_cast<std::uint64_t>(bucket);
  const int shift = bucket / kSub - 1;
  const auto sub = static_cast<std::uint64_t>(bucket % kSub);
  return (std::uint64_t{kSub} + sub) << shift;
}

std::uint64_t LatencyHistogram::bucket_high(int bucket) {
  if (bucket < kSub) return static_cast<std::uint64_t>(bucket);
  const int shift = bucket / kSub - 1;
  return bucket_low(bucket) + (std::uint64_t{1} << shift) - 1;
}

std::uint64_t LatencyHistogram::counted_up_to(std::uint64_t bound) {
  const int b = bucket_of(bound);
  return bucket_high(b) == bound ? bound : bucket_low(b) - 1;
}

void LatencyHistogram::record(std::uint64_t ns) {
  counts_[static_cast<std::size_t>(bucket_of(ns))].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(ns, std::memory_order_relaxed);
  std::uint64_t seen = max_.load(std::memory_order_relaxed);
  while (ns > seen && !max_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

void LatencyHistogram::reset() {
  for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
  count_.store(0);
  sum_.store(0);
  max_.store(0);
}

LatencyHistogram::Summary LatencyHistogram::summary() const {
  Summary s;
  std::vector<std::uint64_t> counts(kBuckets);
  for (int i = 0; i < kBuckets; ++i) {
    counts[static_cast<std::size_t>(i)] = counts_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
    s.count += counts[static_cast<std::size_t>(i)];
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.max = max_.load(std::memory_order_relaxed);
  if (s.count == 0) return s;
  // Buckets in ascending order, bounds too: one pass, each fine bucket added
  // under the first bound at or above its end (and so under every later one).
  std::size_t bound = 0;
  std::uint64_t below = 0;
  for (int i = 0; i < kBuckets && bound < kBounds.size(); ++i) {
    while (bound < kBounds.size() && bucket_high(i) > kBounds[bound]) s.at_most[bound++] = below;
    below += counts[static_cast<std::size_t>(i)];
  }
  while (bound < kBounds.size()) s.at_most[bound++] = below;
  // The percentile's sample (common/percentile.h's nearest rank) is reported
  // as the middle of its bucket, never above the largest value seen.
  auto at = [&](double q) {
    const std::uint64_t rank = nearest_rank(q, s.count);
    std::uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts[static_cast<std::size_t>(i)];
      if (seen >= rank) return std::min(s.max, (bucket_low(i) + bucket_high(i)) / 2);
    }
    return s.max;
  };
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.p999 = at(0.999);
  return s;
}

}  // namespace nvj
