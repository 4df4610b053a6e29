// Statistics: the histogram's buckets and percentiles, and what a device
// records on a manual clock with a real model.
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "server/device/device.h"
#include "server/model/hdd_model.h"
#include "server/model/nvram_model.h"
#include "server/probe/latency_histogram.h"
#include "server/store/memory_store.h"

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
  dev.stats().reset();
  CHECK(dev.stats().snapshot().ops[static_cast<std::size_t>(IoOp::write)].count == 0);
}

TEST_CASE("a device answers no earlier than its model on a manual clock", "[stats]") {
  ManualClock clock;
  Device dev("journal", std::make_unique<MemoryStore>(1 << 20), Durability::on_acknowledge,
             std::make_unique<NvramModel>(NvramModel::Params{1000, 25'000, 0, 4}), &clock);
  const char b[8] = {};
  dev.write(b, 8, 0, false);
  CHECK(clock.now() == 25'000);
  dev.read(const_cast<char*>(b), 8, 0);
  CHECK(clock.now() == 26'000);
  const auto s = dev.stats().snapshot();
  CHECK(s.ops[static_cast<std::size_t>(IoOp::write)].latency.max == 25'000);
  CHECK(s.ops[static_cast<std::size_t>(IoOp::read)].latency.max == 1000);
}

TEST_CASE("a region on the device's model is charged for destaging its own writes", "[stats]") {
  ManualClock clock;
  HddModel::Params p;
  p.geometry.capacity = 1ull << 30;
  p.readahead = 0;
  Device dev("data", std::make_unique<MemoryStore>(1ull << 30), Durability::on_flush, std::make_unique<HddModel>(p),
             &clock);
  dev.add_region("journal", {{512ull << 20, 16ull << 20}}, Durability::on_flush, nullptr, true);
  std::vector<char> block(65536, 'j');
  for (std::uint64_t i = 0; i < 16; ++i) dev.write(block.data(), 65536, (512ull << 20) + i * 65536, false);
  for (std::uint64_t i = 0; i < 8; ++i) dev.write(block.data(), 4096, i * (100ull << 20), false);
  dev.flush();
  const auto home = dev.stats().snapshot();
  const auto journal = dev.region(0).stats.snapshot();
  // The flush was served once, by the device's own region, and waited for both.
  CHECK(home.ops[static_cast<std::size_t>(IoOp::flush)].count == 1);
  CHECK(journal.ops[static_cast<std::size_t>(IoOp::flush)].count == 0);
  CHECK(home.destage_ns > 0);
  CHECK(journal.destaged_writes_ns > 0);
  CHECK(home.destaged_writes_ns > journal.destaged_writes_ns);  // 8 seeks against one sweep
  // The flush's destaging, and the idle disk's before the flush came.
  CHECK(home.destaged_writes_ns + journal.destaged_writes_ns > home.destage_ns);
  dev.reset_stats();
  CHECK(dev.region(0).stats.snapshot().destaged_writes_ns == 0);

  // A region with a model of its own destages only its own writes.
  Device ext("data", std::make_unique<MemoryStore>(64 << 20), Durability::on_flush, nullptr, &clock);
  ext.add_region("journal", {{0, 32 << 20}}, Durability::on_flush, std::make_unique<HddModel>(p), false);
  // (The first write's destaging starts while the disk is idle; the flush waits for the rest.)
  for (std::uint32_t i = 0; i < 8; ++i) ext.write(block.data(), 4096, i * (4u << 20), false);
  ext.flush();
  const auto own = ext.region(0).stats.snapshot();
  CHECK(own.destaged_writes_ns > own.destage_ns);
  CHECK(own.destaged_writes_ns > 0);
  CHECK(ext.stats().snapshot().destaged_writes_ns == 0);
}

TEST_CASE("at most kIoTags - 1 regions share the device's model", "[stats]") {
  Device dev("data", std::make_unique<MemoryStore>(1 << 20), Durability::on_flush, nullptr);
  for (std::size_t i = 0; i + 1 < kIoTags; ++i)
    dev.add_region('r' + std::to_string(i), {{i * 4096, 4096}}, Durability::on_flush, nullptr, true);
  CHECK_THROWS_WITH(dev.add_region("one more", {{1 << 19, 4096}}, Durability::on_flush, nullptr, true),
                    Catch::Contains("at most 3 regions can share"));
  dev.add_region("own model", {{1 << 19, 4096}}, Durability::on_flush, nullptr, false);  // needs no tag
  CHECK(dev.region_count() == kIoTags);
}
