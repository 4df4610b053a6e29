// Device: one export as the client sees it. It applies the export's
// durability rule to its store and, with a timing model, replies no earlier
// than the model says the request completes (design.md, "A request's way
// through"): the model is asked under a lock, in arrival order; the bytes
// land; then the caller waits on the clock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "server/device/durability.h"
#include "server/model/clock.h"
#include "server/probe/device_stats.h"
#include "server/model/timing_model.h"
#include "server/store/store.h"

namespace nvj {

class Device {
 public:
  // Without a model, requests complete as fast as the store allows. Without a
  // clock, the monotonic one.
  Device(std::string name, std::unique_ptr<Store> store, Durability durability,
         std::unique_ptr<TimingModel> model = nullptr, Clock* clock = nullptr);

  const std::string& name() const { return name_; }
  std::uint64_t size() const { return store_->size(); }
  Durability durability() const { return durability_; }
  const Store& store() const { return *store_; }

  void read(void* buf, std::uint32_t count, std::uint64_t offset);
  void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua);
  void zero(std::uint32_t count, std::uint64_t offset, bool fua);
  void trim(std::uint32_t count, std::uint64_t offset, bool fua);
  void flush();
  void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) {
    store_->extents(offset, count, sink);
  }

  // "data: 1 GiB, sparse memory, durable after flush or FUA, hdd: 7200 rpm, ..."
  std::string describe() const;
  // "hdd: 7200 rpm, ..." or "none".
  std::string model_description() const;

  // Changes the timing model at run time (nullptr: none). The durability
  // rule is fixed when the server starts, so a model whose cache would change
  // it is refused with std::invalid_argument.
  void set_model(std::unique_ptr<TimingModel> model);

  DeviceStats& stats() { return stats_; }
  const DeviceStats& stats() const { return stats_; }

 private:
  bool durable(bool fua) const { return fua || durability_ == Durability::on_acknowledge; }
  // One request: the model's timing, the bytes (store_op), the wait, the
  // statistics (also when store_op throws).
  template <typename StoreOp>
  void serve(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, StoreOp&& store_op);

  const std::string name_;
  const std::unique_ptr<Store> store_;
  const Durability durability_;
  mutable std::mutex model_mutex_;
  std::unique_ptr<TimingModel> model_;
  Clock* const clock_;
  DeviceStats stats_;
  std::atomic<std::uint64_t> last_end_{~std::uint64_t{0}};  // where the last read or write ended
};

}  // namespace nvj
