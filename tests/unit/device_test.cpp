// SPDX-License-Identifier: BSD-3-Clause
// Device: the durability rule applied to the store, and replies no earlier
// than the timing model says. (Regions: device_regions_test.cpp.)
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "server/device/device.h"
#include "server/model/nvram_model.h"
#include "server/store/memory_store.h"

namespace device_test {

namespace {

// Records which durability each request asked of the store.
class RecordingStore final : public nvj::Store {
 public:
  std::vector<std::string> log;
  nvj::MemoryStore bytes{1 << 20};

  std::uint64_t size() const override { return bytes.size(); }
  void read(void* b, std::uint32_t c, std::uint64_t o) override { bytes.read(b, c, o); }
  void write(const void* b, std::uint32_t c, std::uint64_t o, bool durable) override {
    log.push_back(durable ? "write durable" : "write");
    bytes.write(b, c, o, durable);
  }
  void zero(std::uint32_t, std::uint64_t, bool durable) override { log.push_back(durable ? "zero durable" : "zero"); }
  void trim(std::uint32_t, std::uint64_t, bool durable) override { log.push_back(durable ? "trim durable" : "trim"); }
  void flush() override { log.push_back("flush"); }
  void extents(std::uint64_t, std::uint64_t, const nvj::ExtentSink&) override {}
  bool persistent() const override { return false; }
  std::string describe() const override { return "recording"; }
};

}  // namespace

TEST_CASE("an on-flush device makes only FUA writes durable and passes flush down", "[device]") {
  auto store = std::make_unique<RecordingStore>();
  auto* log = &store->log;
  nvj::Device dev("data", std::move(store), nvj::Durability::on_flush);
  const char b[4] = {1, 2, 3, 4};
  dev.write(b, 4, 0, false);
  dev.write(b, 4, 0, true);
  dev.zero(4, 0, false);
  dev.trim(4, 0, true);
  dev.flush();
  CHECK(*log == std::vector<std::string>{"write", "write durable", "zero", "trim durable", "flush"});
  // Without a model it tells the host it has a write cache exactly when it loses writes without a flush.
  CHECK(dev.describe() ==
        "data: 1 MiB, recording, durable after flush or FUA; to the host: non-rotational, write-back cache, trim, "
        "zero, sectors 512/4096");
}

TEST_CASE("an on-acknowledge device makes every write durable and flush has nothing to do", "[device]") {
  auto store = std::make_unique<RecordingStore>();
  auto* log = &store->log;
  nvj::Device dev("journal", std::move(store), nvj::Durability::on_acknowledge);
  const char b[4] = {1, 2, 3, 4};
  dev.write(b, 4, 0, false);
  dev.zero(4, 0, false);
  dev.trim(4, 0, false);
  dev.flush();
  CHECK(*log == std::vector<std::string>{"write durable", "zero durable", "trim durable"});
  char back[4] = {};
  dev.read(back, 4, 0);
  CHECK(back[3] == 4);
}

TEST_CASE("a device answers no earlier than its model on a manual clock", "[device]") {
  nvj::ManualClock clock;
  nvj::Device dev("journal", std::make_unique<nvj::MemoryStore>(1 << 20), nvj::Durability::on_acknowledge,
                  std::make_unique<nvj::NvramModel>(nvj::NvramModel::Params{1000, 25'000, 0, 4}), &clock);
  char b[8] = {};
  dev.write(b, 8, 0, false);
  CHECK(clock.now() == 25'000);
  dev.read(b, 8, 0);
  CHECK(clock.now() == 26'000);
  const auto s = dev.stats().snapshot();
  CHECK(s.ops[static_cast<std::size_t>(nvj::IoOp::write)].latency.max == 25'000);
  CHECK(s.ops[static_cast<std::size_t>(nvj::IoOp::read)].latency.max == 1000);
}

}  // namespace device_test
