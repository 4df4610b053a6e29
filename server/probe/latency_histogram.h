// LatencyHistogram: a log-linear histogram of nanoseconds, lock-free. Each
// power of two is split into 32 buckets, so a percentile is within about 3%
// of the true value; values from 0 to 2^40 ns (18 minutes) fit.
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

  void record(std::uint64_t ns);
  void reset();

  struct Summary {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    std::uint64_t max = 0;
    std::uint64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  };
  Summary summary() const;

  // The bucket a value falls in, and the smallest and largest values of a
  // bucket (exposed for the tests).
  static int bucket_of(std::uint64_t ns);
  static std::uint64_t bucket_low(int bucket);
  static std::uint64_t bucket_high(int bucket);

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace nvj
