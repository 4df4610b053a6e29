// SPDX-License-Identifier: BSD-3-Clause
// LatencyHistogram: a log-linear histogram of nanoseconds, lock-free. Each
// power of two is split into 32 buckets, so a percentile is within about 3%
// of the true value; values from 0 to 2^40 ns (18 minutes) fit.
//
// A summary also counts the values at or below fixed bounds (Prometheus'
// cumulative `le` buckets), from the same buckets: a fine bucket counts
// under a bound only if it ends at or below it, so a value is never counted
// under a bound it exceeds, and the bounds are exact to within 1.7% (a value
// up to 1.7% below a bound may fall in a fine bucket that straddles it and
// be counted from the next bound up; stats_test.cpp checks every bound).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace nvj {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (41 - kSubBits + 1) * kSub;

  // The bounds, in ns: 1, 2 and 5 per decade from 1 us (an NVRAM write) to
  // 10 s (a disk behind a long queue).
  static constexpr std::array<std::uint64_t, 22> kBounds{
      1'000,       2'000,       5'000,         10'000,        20'000,        50'000,
      100'000,     200'000,     500'000,       1'000'000,     2'000'000,     5'000'000,
      10'000'000,  20'000'000,  50'000'000,    100'000'000,   200'000'000,   500'000'000,
      1'000'000'000, 2'000'000'000, 5'000'000'000, 10'000'000'000};

  void record(std::uint64_t ns);
  void reset();

  struct Summary {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    std::uint64_t max = 0;
    std::uint64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
    // at_most[i]: the values counted at or below kBounds[i] (see above).
    std::array<std::uint64_t, kBounds.size()> at_most{};
  };
  Summary summary() const;

  // The bucket a value falls in, and the smallest and largest values of a
  // bucket (exposed for the tests).
  static int bucket_of(std::uint64_t ns);
  static std::uint64_t bucket_low(int bucket);
  static std::uint64_t bucket_high(int bucket);
  // The largest value counted under `bound`: the bound itself when a fine
  // bucket ends there, else the end of the bucket below the one across it.
  static std::uint64_t counted_up_to(std::uint64_t bound);

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace nvj
