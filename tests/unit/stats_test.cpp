// SPDX-License-Identifier: BSD-3-Clause
// Statistics: the histogram's buckets and percentiles, and what a device
// records on a manual clock with a real model. (Each region's statistics:
// device_regions_test.cpp.)
#include <catch2/catch.hpp>

#include <memory>
#include <cmath>
#include <thread>
#include <vector>

#include "server/device/device.h"
#include "server/model/hdd_model.h"
#include "server/probe/latency_histogram.h"
#include "server/store/memory_store.h"

namespace stats_test {

using namespace nvj;

TEST_CASE("histogram buckets cover every value within 1/32", "[stats]") {
  for (std::uint64_t v : {0ull, 1ull, 31ull, 32ull, 33ull, 1000ull, 123456ull, 10'000'000ull, 1ull << 39}) {
    const int b = LatencyHistogram::bucket_of(v);
    CHECK(LatencyHistogram::bucket_low(b) <= v);
    CHECK(LatencyHistogram::bucket_high(b) >= v);
    CHECK(static_cast<double>(LatencyHistogram::bucket_high(b) - LatencyHistogram::bucket_low(b)) <=
          static_cast<double>(v) / 32.0 + 1);
  }
  CHECK(LatencyHistogram::bucket_of(~0ull) == LatencyHistogram::kBuckets - 1);
}

TEST_CASE("histogram percentiles are within 3 percent", "[stats]") {
  LatencyHistogram h;
  for (std::uint64_t i = 1; i <= 100000; ++i) h.record(i * 100);  // 100 ns .. 10 ms, uniform
  const auto s = h.summary();
  CHECK(s.count == 100000);
  CHECK(s.max == 10'000'000);
  CHECK(s.sum == 100ull * 100000 * 100001 / 2);
  CHECK(std::abs(static_cast<double>(s.p50) - 5e6) < 0.03 * 5e6);
  CHECK(std::abs(static_cast<double>(s.p90) - 9e6) < 0.03 * 9e6);
  CHECK(std::abs(static_cast<double>(s.p99) - 9.9e6) < 0.03 * 9.9e6);
  CHECK(s.p999 <= s.max);
  h.reset();
  CHECK(h.summary().count == 0);
}

TEST_CASE("histogram counts at the fixed bounds never count a value above a bound, within 1.7% below", "[stats]") {
  const auto& bounds = LatencyHistogram::kBounds;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const std::uint64_t bound = bounds[i];
    const std::uint64_t counted = LatencyHistogram::counted_up_to(bound);
    CAPTURE(bound, counted);
    CHECK(counted <= bound);
    CHECK(static_cast<double>(bound - counted) < 0.017 * static_cast<double>(bound));
    // The largest value counted under the bound is, the next one is not: it
    // is counted from the next bound up.
    LatencyHistogram h;
    h.record(counted);
    h.record(counted + 1);
    const auto s = h.summary();
    for (std::size_t j = 0; j < i; ++j) CHECK(s.at_most[j] == 0);
    CHECK(s.at_most[i] == 1);
    for (std::size_t j = i + 1; j < bounds.size(); ++j) CHECK(s.at_most[j] == 2);
  }
  // The bounds: 1, 2 and 5 per decade from 1 us to 10 s.
  CHECK(bounds.front() == 1'000);
  CHECK(bounds.back() == 10'000'000'000);
  for (std::size_t i = 1; i < bounds.size(); ++i)
    CHECK((bounds[i] * 2 == bounds[i - 1] * 5 || bounds[i] == 2 * bounds[i - 1]));
}

TEST_CASE("histogram counts at the fixed bounds agree with the values recorded", "[stats]") {
  LatencyHistogram h;
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v < 20'000'000'000; v = v * 21 / 20 + 1) values.push_back(v);  // 1 ns .. 20 s
  values.push_back(LatencyHistogram::kBounds[3]);  // exactly on a bound
  for (const std::uint64_t v : values) h.record(v);
  const auto s = h.summary();
  CHECK(s.count == values.size());
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
    const std::uint64_t bound = LatencyHistogram::kBounds[i];
    std::uint64_t at_or_below = 0, counted = 0;
    for (const std::uint64_t v : values) {
      at_or_below += v <= bound ? 1u : 0u;
      counted += v <= LatencyHistogram::counted_up_to(bound) ? 1u : 0u;
    }
    CAPTURE(bound);
    CHECK(s.at_most[i] == counted);
    CHECK(s.at_most[i] <= at_or_below);
    CHECK(s.at_most[i] >= previous);
    previous = s.at_most[i];
  }
  CHECK(s.at_most.back() < s.count);  // the values above 10 s are only in the count (+Inf)
  h.reset();
  CHECK(h.summary().at_most.back() == 0);
}

TEST_CASE("histogram counts concurrent records exactly", "[stats]") {
  LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&h] {
      for (int i = 0; i < 50000; ++i) h.record(static_cast<std::uint64_t>(i));
    });
  for (auto& t : threads) t.join();
  CHECK(h.summary().count == 200000);
  CHECK(h.summary().max == 49999);
}

TEST_CASE("a device records latency, bytes, depth and the model's breakdown", "[stats]") {
  ManualClock clock;
  HddModel::Params p;
  p.geometry.capacity = 1ull << 30;
  p.cache = false;
  p.readahead = 0;
  Device dev("data", std::make_unique<MemoryStore>(1ull << 30), Durability::on_acknowledge,
             std::make_unique<HddModel>(p), &clock);
  std::vector<char> block(4096, 'x');
  dev.write(block.data(), 4096, 0, false);
  dev.write(block.data(), 4096, 4096, false);         // sequential
  dev.write(block.data(), 4096, 900ull << 20, false);  // a long seek
  dev.read(block.data(), 4096, 0);
  dev.flush();
  const auto s = dev.stats().snapshot();
  const auto& w = s.ops[static_cast<std::size_t>(IoOp::write)];
  CHECK(w.count == 3);
  CHECK(w.bytes == 3 * 4096);
  CHECK(w.errors == 0);
  CHECK(w.latency.max > 0);  // the manual clock moved to each completion
  CHECK(s.ops[static_cast<std::size_t>(IoOp::read)].count == 1);
  CHECK(s.ops[static_cast<std::size_t>(IoOp::flush)].count == 1);
  CHECK(s.media_requests == 4);
  CHECK(s.sequential == 1);
  CHECK(s.seeks >= 2);
  CHECK(s.seek_ns > 0);
  CHECK(s.rotation_ns > 0);
  CHECK(s.transfer_ns > 0);
  CHECK(s.depth[0] == 5);  // one at a time
  CHECK(s.in_flight == 0);
  // Every request the model timed left at its completion time: the manual
  // clock moves there and no further.
  CHECK(s.late.count == 5);
  CHECK(s.late.max == 0);
  dev.stats().reset();
  CHECK(dev.stats().snapshot().ops[static_cast<std::size_t>(IoOp::write)].count == 0);
  CHECK(dev.stats().snapshot().late.count == 0);
}

}  // namespace stats_test
