// SPDX-License-Identifier: BSD-3-Clause
// Device regions: a request is split where it crosses a region's edge, each
// piece lands in the store at its own place, is timed by its region's model,
// counted in its region's statistics and made durable by its region's rule.
// The real Device on a MemoryStore and a manual clock.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/clock.h"
#include "server/device/device.h"
#include "server/model/hdd_model.h"
#include "server/model/nvram_model.h"
#include "server/store/io_error.h"
#include "server/store/memory_store.h"

namespace device_regions_test {

using namespace nvj;

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr Nanos kJournalWrite = 25'000;  // the journal's NVRAM: every write takes this long
constexpr Nanos kJournalRead = 1000;

// A 1 MiB data disk (durable after flush or FUA, no model) with an internal
// journal in two pieces, [64K, 72K) and [96K, 104K), on an NVRAM model of its
// own and durable when acknowledged, and a "log" region [72K, 80K) right
// after the journal's first piece, durable after flush like the disk but
// counted apart.
struct Disk {
  ManualClock clock;
  MemoryStore* store = nullptr;  // owned by dev
  std::unique_ptr<Device> dev;

  Disk() {
    auto owned = std::make_unique<MemoryStore>(1 << 20);
    store = owned.get();
    dev = std::make_unique<Device>("data", std::move(owned), Durability::on_flush, nullptr, &clock);
    dev->add_region("journal", {{64 * kKiB, 8 * kKiB}, {96 * kKiB, 8 * kKiB}}, Durability::on_acknowledge,
                    std::make_unique<NvramModel>(NvramModel::Params{kJournalRead, kJournalWrite, 0, 4}), false);
    dev->add_region("log", {{72 * kKiB, 8 * kKiB}}, Durability::on_flush, nullptr, false);
  }

  DeviceStats::Snapshot data() const { return dev->stats().snapshot(); }
  DeviceStats::Snapshot journal() const { return dev->region(0).stats.snapshot(); }
  DeviceStats::Snapshot log() const { return dev->region(1).stats.snapshot(); }

  std::vector<char> stored(std::uint64_t offset, std::uint64_t length) const {
    std::vector<char> out(length);
    store->read(out.data(), static_cast<std::uint32_t>(length), offset);
    return out;
  }
};

const DeviceStats::Op& op(const DeviceStats::Snapshot& s, IoOp which) { return s.ops[static_cast<std::size_t>(which)]; }

// Bytes that differ at every offset (within 251), so a piece landing at the
// wrong place shows.
std::vector<char> pattern(std::uint64_t offset, std::uint64_t length, std::uint64_t salt) {
  std::vector<char> out(length);
  for (std::uint64_t i = 0; i < length; ++i) out[i] = static_cast<char>(((offset + i) * 7 + salt) % 251);
  return out;
}

void write(Disk& d, std::uint64_t offset, std::uint64_t length, std::uint64_t salt, bool fua = false) {
  const std::vector<char> bytes = pattern(offset, length, salt);
  d.dev->write(bytes.data(), static_cast<std::uint32_t>(length), offset, fua);
}

}  // namespace

TEST_CASE("a request that ends or starts at a region's edge is served by one region", "[device][regions]") {
  Disk d;
  REQUIRE(d.dev->region_count() == 2);
  CHECK(d.dev->region(0).bytes == 16 * kKiB);
  CHECK(d.dev->region(1).bytes == 8 * kKiB);

  write(d, 60 * kKiB, 4 * kKiB, 1);          // ends where the journal starts
  write(d, 64 * kKiB, 8 * kKiB, 2);          // exactly the journal's first piece
  write(d, 72 * kKiB - 1, 1, 3);             // its last byte
  write(d, 72 * kKiB, 8 * kKiB, 4);          // exactly the log
  write(d, 80 * kKiB, 4 * kKiB, 5);          // starts where the log ends
  write(d, 104 * kKiB, 4 * kKiB, 6);         // starts where the journal's second piece ends
  CHECK(op(d.data(), IoOp::write).count == 3);
  CHECK(op(d.data(), IoOp::write).bytes == 12 * kKiB);
  CHECK(op(d.journal(), IoOp::write).count == 2);
  CHECK(op(d.journal(), IoOp::write).bytes == 8 * kKiB + 1);
  CHECK(op(d.log(), IoOp::write).count == 1);
  CHECK(op(d.log(), IoOp::write).bytes == 8 * kKiB);
  // Only the journal's writes waited for its model.
  CHECK(d.clock.now() == 2 * kJournalWrite);
  CHECK(op(d.data(), IoOp::write).latency.max == 0);
  CHECK(op(d.journal(), IoOp::write).latency.max == kJournalWrite);

  CHECK(d.stored(60 * kKiB, 4 * kKiB) == pattern(60 * kKiB, 4 * kKiB, 1));
  std::vector<char> journal = pattern(64 * kKiB, 8 * kKiB, 2);
  journal.back() = pattern(72 * kKiB - 1, 1, 3)[0];
  CHECK(d.stored(64 * kKiB, 8 * kKiB) == journal);
  CHECK(d.stored(72 * kKiB, 8 * kKiB) == pattern(72 * kKiB, 8 * kKiB, 4));
  CHECK(d.stored(80 * kKiB, 4 * kKiB) == pattern(80 * kKiB, 4 * kKiB, 5));
  CHECK(d.stored(104 * kKiB, 4 * kKiB) == pattern(104 * kKiB, 4 * kKiB, 6));
}

TEST_CASE("a write across one region boundary is split between the regions", "[device][regions]") {
  Disk d;
  write(d, 60 * kKiB, 8 * kKiB, 1);  // 4K of the disk, 4K of the journal
  CHECK(d.stored(60 * kKiB, 8 * kKiB) == pattern(60 * kKiB, 8 * kKiB, 1));
  CHECK(op(d.data(), IoOp::write).count == 1);
  CHECK(op(d.data(), IoOp::write).bytes == 4 * kKiB);
  CHECK(op(d.journal(), IoOp::write).count == 1);
  CHECK(op(d.journal(), IoOp::write).bytes == 4 * kKiB);
  CHECK(op(d.log(), IoOp::write).count == 0);
  CHECK(d.clock.now() == kJournalWrite);

  // Out of the journal's first piece into the log: both regions, no disk.
  write(d, 70 * kKiB, 4 * kKiB, 2);
  CHECK(d.stored(70 * kKiB, 4 * kKiB) == pattern(70 * kKiB, 4 * kKiB, 2));
  CHECK(op(d.journal(), IoOp::write).count == 2);
  CHECK(op(d.journal(), IoOp::write).bytes == 6 * kKiB);
  CHECK(op(d.log(), IoOp::write).count == 1);
  CHECK(op(d.log(), IoOp::write).bytes == 2 * kKiB);
  CHECK(op(d.data(), IoOp::write).count == 1);
}

TEST_CASE("a request across two and more region boundaries is split at each", "[device][regions]") {
  Disk d;
  // Disk 4K | journal 8K | log 4K.
  write(d, 60 * kKiB, 16 * kKiB, 1);
  CHECK(d.stored(60 * kKiB, 16 * kKiB) == pattern(60 * kKiB, 16 * kKiB, 1));
  CHECK(op(d.data(), IoOp::write).count == 1);
  CHECK(op(d.data(), IoOp::write).bytes == 4 * kKiB);
  CHECK(op(d.journal(), IoOp::write).count == 1);
  CHECK(op(d.journal(), IoOp::write).bytes == 8 * kKiB);
  CHECK(op(d.log(), IoOp::write).count == 1);
  CHECK(op(d.log(), IoOp::write).bytes == 4 * kKiB);

  // Journal 4K | log 8K | disk 16K | journal 4K: the journal's two pieces
  // are two requests of its own.
  write(d, 68 * kKiB, 32 * kKiB, 2);
  CHECK(d.stored(68 * kKiB, 32 * kKiB) == pattern(68 * kKiB, 32 * kKiB, 2));
  CHECK(op(d.journal(), IoOp::write).count == 3);
  CHECK(op(d.journal(), IoOp::write).bytes == 16 * kKiB);
  CHECK(op(d.log(), IoOp::write).count == 2);
  CHECK(op(d.log(), IoOp::write).bytes == 12 * kKiB);
  CHECK(op(d.data(), IoOp::write).count == 2);
  CHECK(op(d.data(), IoOp::write).bytes == 20 * kKiB);
  CHECK(d.clock.now() == 3 * kJournalWrite);

  // A read over all of it comes back whole, in six pieces.
  std::vector<char> back(52 * kKiB);
  d.dev->read(back.data(), static_cast<std::uint32_t>(back.size()), 56 * kKiB);
  CHECK(back == d.stored(56 * kKiB, 52 * kKiB));
  CHECK(op(d.data(), IoOp::read).count == 3);  // [56K, 64K), [80K, 96K), [104K, 108K)
  CHECK(op(d.data(), IoOp::read).bytes == 28 * kKiB);
  CHECK(op(d.journal(), IoOp::read).count == 2);
  CHECK(op(d.journal(), IoOp::read).bytes == 16 * kKiB);
  CHECK(op(d.log(), IoOp::read).count == 1);
  CHECK(op(d.log(), IoOp::read).bytes == 8 * kKiB);
  CHECK(d.clock.now() == 3 * kJournalWrite + 2 * kJournalRead);

  // Zero and trim are split the same way.
  d.dev->zero(static_cast<std::uint32_t>(8 * kKiB), 60 * kKiB, false);
  CHECK(d.stored(60 * kKiB, 8 * kKiB) == std::vector<char>(8 * kKiB, 0));
  CHECK(op(d.data(), IoOp::zero).count == 1);
  CHECK(op(d.journal(), IoOp::zero).count == 1);
  d.dev->trim(static_cast<std::uint32_t>(16 * kKiB), 68 * kKiB, false);
  CHECK(op(d.journal(), IoOp::trim).bytes == 4 * kKiB);
  CHECK(op(d.log(), IoOp::trim).bytes == 8 * kKiB);
  CHECK(op(d.data(), IoOp::trim).bytes == 4 * kKiB);

  // A flush goes to every region that is not on the disk's own model.
  d.dev->flush();
  CHECK(op(d.data(), IoOp::flush).count == 1);
  CHECK(op(d.journal(), IoOp::flush).count == 1);
  CHECK(op(d.log(), IoOp::flush).count == 1);
}

TEST_CASE("a power cut drops the unflushed writes of on-flush regions only", "[device][regions][power]") {
  Disk d;
  d.dev->enable_power_loss(1 << 20);
  write(d, 56 * kKiB, 52 * kKiB, 1);
  d.dev->flush();  // all of it durable

  // Disk 4K | journal 8K | log 8K | disk 16K | journal 4K, neither FUA nor
  // flushed: only the journal's pieces are durable.
  write(d, 60 * kKiB, 40 * kKiB, 2);
  const CrashReport report = d.dev->cut_power(CrashPolicy{CrashPolicy::Kind::all, 1, 512});
  CHECK(report.durable == 2);
  CHECK(report.volatile_lost == 3);
  CHECK(report.volatile_kept == 0);
  CHECK(report.bytes_lost == 28 * kKiB);
  char byte = 0;
  CHECK_THROWS_AS(d.dev->read(&byte, 1, 0), IoError);
  d.dev->power_on();

  CHECK(d.stored(60 * kKiB, 4 * kKiB) == pattern(60 * kKiB, 4 * kKiB, 1));
  CHECK(d.stored(64 * kKiB, 8 * kKiB) == pattern(64 * kKiB, 8 * kKiB, 2));
  CHECK(d.stored(72 * kKiB, 8 * kKiB) == pattern(72 * kKiB, 8 * kKiB, 1));
  CHECK(d.stored(80 * kKiB, 16 * kKiB) == pattern(80 * kKiB, 16 * kKiB, 1));
  CHECK(d.stored(96 * kKiB, 4 * kKiB) == pattern(96 * kKiB, 4 * kKiB, 2));
  CHECK(d.stored(100 * kKiB, 4 * kKiB) == pattern(100 * kKiB, 4 * kKiB, 1));

  // FUA makes every piece durable; a flush makes the on-flush ones durable.
  write(d, 60 * kKiB, 8 * kKiB, 3, true);
  write(d, 72 * kKiB, 12 * kKiB, 4);
  d.dev->flush();
  write(d, 80 * kKiB, 20 * kKiB, 5);  // disk 16K | journal 4K, after the flush
  d.dev->zero(static_cast<std::uint32_t>(8 * kKiB), 92 * kKiB, false);  // disk 4K | journal 4K
  const CrashReport second = d.dev->cut_power(CrashPolicy{CrashPolicy::Kind::all, 1, 512});
  d.dev->power_on();
  CHECK(second.volatile_lost == 2);  // the write's and the zero's disk pieces
  CHECK(d.stored(60 * kKiB, 8 * kKiB) == pattern(60 * kKiB, 8 * kKiB, 3));
  CHECK(d.stored(72 * kKiB, 12 * kKiB) == pattern(72 * kKiB, 12 * kKiB, 4));
  CHECK(d.stored(84 * kKiB, 12 * kKiB) == pattern(84 * kKiB, 12 * kKiB, 1));
  CHECK(d.stored(96 * kKiB, 4 * kKiB) == std::vector<char>(4 * kKiB, 0));
}

TEST_CASE("a region on the device's model is charged for destaging its own writes", "[device][regions]") {
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
  CHECK(op(home, IoOp::flush).count == 1);
  CHECK(op(journal, IoOp::flush).count == 0);
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

TEST_CASE("regions must lie inside the device, apart, and at most kIoTags - 1 share its model", "[device][regions]") {
  Device dev("data", std::make_unique<MemoryStore>(1 << 20), Durability::on_flush, nullptr);
  CHECK_THROWS_WITH(dev.add_region("far", {{1 << 20, 4096}}, Durability::on_flush, nullptr, false),
                    "data: region far reaches past the end of the device");
  CHECK_THROWS_WITH(dev.add_region("long", {{(1 << 20) - 4096, 8192}}, Durability::on_flush, nullptr, false),
                    "data: region long reaches past the end of the device");
  CHECK_THROWS_AS(dev.add_region("empty", {{0, 0}}, Durability::on_flush, nullptr, false), std::invalid_argument);
  CHECK_THROWS_WITH(dev.add_region("self", {{0, 8192}, {4096, 8192}}, Durability::on_flush, nullptr, false),
                    "data: region self overlaps another region");
  CHECK(dev.region_count() == 0);

  for (std::size_t i = 0; i + 1 < kIoTags; ++i)
    dev.add_region('r' + std::to_string(i), {{i * 4096, 4096}}, Durability::on_flush, nullptr, true);
  CHECK_THROWS_WITH(dev.add_region("one more", {{1 << 19, 4096}}, Durability::on_flush, nullptr, true),
                    Catch::Contains("at most 3 regions can share"));
  CHECK_THROWS_WITH(dev.add_region("over r0", {{2048, 4096}}, Durability::on_flush, nullptr, false),
                    "data: region over r0 overlaps another region");
  dev.add_region("own model", {{1 << 19, 4096}}, Durability::on_flush, nullptr, false);  // needs no tag
  CHECK(dev.region_count() == kIoTags);
}

namespace {

// A manual clock that runs `hook` (once) the first time a request waits
// after it was set: another request, served while the first one waits.
class HookClock final : public Clock {
 public:
  Nanos now() const override { return inner_.now(); }
  void wait_until(Nanos deadline) override {
    inner_.wait_until(deadline);
    if (hook) {
      auto run = std::move(hook);
      hook = nullptr;
      run();
    }
  }
  void advance(Nanos by) { inner_.advance(by); }
  std::function<void()> hook;

 private:
  ManualClock inner_;
};

}  // namespace

TEST_CASE("a flush covers the writes acknowledged before it arrived, in every region", "[device][regions][power]") {
  // A disk (durable after flush) with an NVRAM journal region of its own
  // model: a flush is served once per region, the journal's second. A write
  // to the disk acknowledged while the disk's flush waits arrived after the
  // flush: no part of that flush covers it, however the regions follow.
  HookClock clock;
  clock.advance(kSecond);  // every modelled request waits
  Device dev("data", std::make_unique<MemoryStore>(1 << 20), Durability::on_flush,
             std::make_unique<NvramModel>(NvramModel::Params{kJournalRead, kJournalWrite, 1ull << 30, 4}), &clock);
  dev.add_region("journal", {{64 * kKiB, 8 * kKiB}}, Durability::on_acknowledge,
                 std::make_unique<NvramModel>(NvramModel::Params{kJournalRead, kJournalWrite, 1ull << 30, 4}), false);
  dev.enable_power_loss(1 << 20);
  const std::vector<char> before(4 * kKiB, 'a'), during(4 * kKiB, 'b');
  dev.write(before.data(), 4 * kKiB, 0, false);
  clock.hook = [&] { dev.write(during.data(), 4 * kKiB, 8 * kKiB, false); };
  dev.flush();
  REQUIRE_FALSE(clock.hook);  // the write was served during the flush
  const CrashReport report = dev.cut_power(CrashPolicy{CrashPolicy::Kind::all, 1, 512});
  dev.power_on();
  // The first write, flushed, has left the log; the second is lost.
  CHECK(report.volatile_lost == 1);
  CHECK(report.bytes_lost == 4 * kKiB);
  std::vector<char> got(4 * kKiB);
  dev.read(got.data(), 4 * kKiB, 0);
  CHECK(got == before);
  dev.read(got.data(), 4 * kKiB, 8 * kKiB);
  CHECK(got == std::vector<char>(4 * kKiB, 0));
}

}  // namespace device_regions_test
