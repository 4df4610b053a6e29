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
#include <shared_mutex>
#include <string>

#include "server/cache/write_log.h"
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
  // Off: requests are not recorded (nothing else changes).
  void set_stats_enabled(bool on) { stats_on_ = on; }

  // Power loss (design.md's durability contract). Once enabled, every write
  // is logged (at most `log_limit` bytes of old and new data) so that
  // cut_power() can drop what a real device would lose; the drive's cache is
  // empty afterwards (its model restarts). After a cut every request fails
  // with EIO, including those caught in flight, until power_on().
  void enable_power_loss(std::uint64_t log_limit);
  bool power_loss_enabled() const { return log_ != nullptr; }
  CrashReport cut_power(const CrashPolicy& policy);
  void power_on();
  bool powered() const;

 private:
  bool durable(bool fua) const { return fua || durability_ == Durability::on_acknowledge; }
  // One request: the model's timing, the bytes (store_op; logged first when
  // power loss is on, `data` being the new bytes or nullptr for zeroes), the
  // wait, the acknowledgement, the statistics (also when it fails).
  template <typename StoreOp>
  void serve(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, const void* data, StoreOp&& store_op);

  const std::string name_;
  const std::unique_ptr<Store> store_;
  const Durability durability_;
  mutable std::mutex model_mutex_;
  std::unique_ptr<TimingModel> model_;
  Clock* const clock_;
  DeviceStats stats_;
  bool stats_on_ = true;  // set before serving
  std::atomic<std::uint64_t> last_end_{~std::uint64_t{0}};  // where the last read or write ended

  std::unique_ptr<WriteLog> log_;
  mutable std::shared_mutex power_mutex_;  // shared by requests, exclusive for a cut
  std::mutex write_order_;                 // a write's log entry and its bytes land together
  bool powered_ = true;                    // guarded by power_mutex_
  std::uint64_t power_epoch_ = 0;          // cuts so far, guarded by power_mutex_
};

}  // namespace nvj
