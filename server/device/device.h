// SPDX-License-Identifier: BSD-3-Clause
// Device: one export as the client sees it. It applies the export's
// durability rule to its store and, with a timing model, replies no earlier
// than the model says the request completes (docs/design.md, "A request's way
// through"): the model is asked under a lock, in arrival order; the bytes
// land; then the caller waits on the clock.
//
// An export is regions (docs/design.md, "Regions"): the device's own, and
// ranges that behave as another device, such as an internal journal on the
// NVRAM model inside the data disk. Each region has its durability rule, its
// model (or the device's own, for a journal on the same disk) and its
// statistics. A request that crosses a region boundary is served piece by
// piece.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "server/powerloss/write_log.h"
#include "server/record/recorder.h"
#include "server/device/durability.h"
#include "common/clock.h"
#include "server/probe/device_stats.h"
#include "server/probe/request_observer.h"
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
  Durability durability() const { return base_.durability; }
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
  // What lands whole at a power cut, bytes: the model's atomic unit, or a
  // sector (512) without a model.
  std::uint64_t atomic_unit() const;

  // What the device tells the host (server/model/device_traits.h): its
  // model's traits, or a device's without one, unless set_traits() replaced
  // them. Fixed while it serves: a model changed at run time keeps them, as
  // clients learn them once, when they connect.
  const DeviceTraits& traits() const { return traits_; }
  // Before serving.
  void set_traits(const DeviceTraits& traits) { traits_ = traits; }

  // Changes the timing model at run time (nullptr: none). The durability
  // rule is fixed when the server starts, so a model whose cache would change
  // it is refused with std::invalid_argument.
  void set_model(std::unique_ptr<TimingModel> model);

  DeviceStats& stats() { return base_.stats; }
  const DeviceStats& stats() const { return base_.stats; }
  // Off: requests are not recorded (nothing else changes).
  void set_stats_enabled(bool on) { stats_on_ = on; }
  // Sees every request served successfully (set before serving; nullptr: none).
  void set_observer(RequestObserver* observer) { observer_ = observer; }

  // A region: byte ranges [offset, offset + length) of this device served
  // with `durability` and `model`, or with the device's own model when
  // `shares_model` (the same disk, counted apart: its writes carry their own
  // tag into the model's cache, so destaging them is counted as the
  // region's). Call before serving. Throws std::invalid_argument for ranges
  // outside the device, overlapping another region, or more than
  // kIoTags - 1 regions sharing the model.
  struct RegionView {
    const std::string& name;
    Durability durability;
    const DeviceStats& stats;
    std::uint64_t bytes;
  };
  void add_region(std::string name, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                  Durability durability, std::unique_ptr<TimingModel> model, bool shares_model);
  // The regions other than the device's own.
  std::size_t region_count() const { return regions_.size(); }
  RegionView region(std::size_t i) const;
  std::string region_model_description(std::size_t i) const;

  // Power loss (docs/design.md, "The durability contract"). Once enabled,
  // every write is logged (at most `log_limit` bytes of old and new data) so
  // that cut_power() can drop what a real device would lose; the drive's cache
  // is empty afterwards (its model restarts). After a cut every request fails
  // with EIO, including those caught in flight, until power_on().
  void enable_power_loss(std::uint64_t log_limit);
  void reset_stats();
  bool power_loss_enabled() const { return log_ != nullptr; }
  CrashReport cut_power(CrashPolicy policy);
  void power_on();
  bool powered() const;

  // The crash lab's recording (server/record/recorder.h): from now on every
  // change, its acknowledgement or failure, and every flush of this device
  // go to `recorder` as export `index` (nullptr: nothing more is recorded).
  // Call it before the device serves, or with power loss on and its changes
  // paused (pause_changes()): then changes land in the order they are
  // recorded.
  void set_recorder(Recorder* recorder, std::uint8_t index);
  // Its starting contents into `recorder` as export `index` (then
  // set_recorder): with its changes paused, or before it serves.
  void record_base(Recorder& recorder, std::uint8_t index) { recorder.base(index, *store_); }
  // The store put back or made a base (`reset`, run with changes paused,
  // e.g. CowStore::restore): the write log forgets the writes it held and
  // the models restart, their caches holding nothing of the old contents.
  template <typename Fn>
  void reset_contents(Fn&& reset) {
    auto paused = pause_changes();
    reset();
    if (log_) log_->clear();
    restart_models();
  }
  // While the lock lives no change lands: what the store holds is one moment
  // of the device. Only with power loss on or a recorder set before serving
  // do changes take their turn (otherwise they would not wait for it).
  std::unique_lock<std::mutex> pause_changes() { return std::unique_lock(write_order_); }

 private:
  struct Region {
    std::string name;
    Durability durability = Durability::on_flush;
    bool shares_model = false;  // timed by the device's own model
    std::uint8_t tag = 0;       // its writes' tag in the model that times it
    mutable std::mutex model_mutex;
    std::unique_ptr<TimingModel> model;
    DeviceStats stats;
    std::atomic<std::uint64_t> last_end{~std::uint64_t{0}};  // where the last read or write ended
    std::uint64_t bytes = 0;
  };
  struct Span {  // a range of the address space that belongs to regions_[index]
    std::uint64_t start, end;
    std::size_t index;
  };

  void restart_models();
  std::vector<Region*> all_regions() {
    std::vector<Region*> all{&base_};
    for (const auto& r : regions_) all.push_back(r.get());
    return all;
  }
  static bool durable(const Region& r, bool fua) { return fua || r.durability == Durability::on_acknowledge; }
  // Calls fn(region, offset, length) for each region's piece of the range, in order.
  template <typename Fn>
  void for_each_piece(std::uint64_t offset, std::uint64_t length, Fn&& fn);
  // One request: the model's timing, the bytes (store_op; logged first when
  // power loss is on, `data` being the new bytes or nullptr for zeroes), the
  // wait, the acknowledgement, the statistics (also when it fails).
  template <typename StoreOp>
  void serve(Region& region, IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, const void* data,
             StoreOp&& store_op);
  // A change whose order matters (power loss on, or a recording set): its
  // log entry, its frame in the recording and its bytes land together under
  // write_order_, in the order changes take it; the frame's copy of the
  // bytes is made after write_order_ is let go (also when the store throws).
  // Out of line, so that serve's path without either stays as short as it
  // was before recordings (bench/RESULTS.md, record_off).
  struct Landed {
    WriteLog::Id entry = 0;
    Recorder* recorder = nullptr;
    std::uint64_t recorded = 0;  // the change's id in the recording
  };
  template <typename StoreOp>
  [[gnu::noinline]] void land_in_order(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua,
                                       const void* data, StoreOp& store_op, Landed& landed);

  const std::string name_;
  const std::unique_ptr<Store> store_;
  Region base_;  // the device's own region
  std::array<Region*, kIoTags> tagged_{&base_};  // the device's model's tags: whose writes they are
  std::vector<std::unique_ptr<Region>> regions_;
  std::vector<Span> spans_;  // sorted, not overlapping; the rest is base_'s
  Clock* const clock_;
  DeviceTraits traits_;   // set before serving
  bool stats_on_ = true;  // set before serving
  RequestObserver* observer_ = nullptr;  // set before serving

  std::unique_ptr<WriteLog> log_;
  std::atomic<Recorder*> recorder_{nullptr};  // set under write_order_
  std::atomic<std::uint8_t> recorder_index_{0};
  std::atomic<bool> changes_ordered_{false};  // a recorder was set: changes take write_order_
  mutable std::shared_mutex power_mutex_;  // shared by requests, exclusive for a cut
  std::mutex write_order_;                 // a write's log entry, its recording and its bytes land together
  bool powered_ = true;                    // guarded by power_mutex_
  std::uint64_t power_epoch_ = 0;          // cuts so far, guarded by power_mutex_
};

}  // namespace nvj
