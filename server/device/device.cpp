// SPDX-License-Identifier: BSD-3-Clause
#include "server/device/device.h"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "common/size.h"
#include "server/store/io_error.h"

namespace nvj {

namespace {

Clock& default_clock() {
  static MonotonicClock clock;
  return clock;
}

fscore::record::FrameKind frame_kind(IoOp op) {
  if (op == IoOp::zero) return fscore::record::FrameKind::zero;
  if (op == IoOp::trim) return fscore::record::FrameKind::trim;
  return fscore::record::FrameKind::write;
}

}  // namespace

Device::Device(std::string name, std::unique_ptr<Store> store, Durability durability,
               std::unique_ptr<TimingModel> model, Clock* clock)
    : name_(std::move(name)), store_(std::move(store)), clock_(clock != nullptr ? clock : &default_clock()) {
  base_.durability = durability;
  base_.model = std::move(model);
  traits_ = base_.model ? base_.model->traits() : untimed_traits(durability);
  base_.bytes = store_->size();
}

void Device::add_region(std::string name, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                        Durability durability, std::unique_ptr<TimingModel> model, bool shares_model) {
  auto region = std::make_unique<Region>();
  region->name = std::move(name);
  region->durability = durability;
  region->shares_model = shares_model;
  region->model = std::move(model);
  if (shares_model) {
    const auto free = std::find(tagged_.begin() + 1, tagged_.end(), nullptr);
    if (free == tagged_.end())
      throw std::invalid_argument(name_ + ": region " + region->name + ": at most " + std::to_string(kIoTags - 1) +
                                  " regions can share the device's model");
    region->tag = static_cast<std::uint8_t>(free - tagged_.begin());
  }
  std::vector<Span> spans = spans_;
  for (const auto& [offset, length] : ranges) {
    if (length == 0 || offset > size() || length > size() - offset)
      throw std::invalid_argument(name_ + ": region " + region->name + " reaches past the end of the device");
    spans.push_back({offset, offset + length, regions_.size()});
    region->bytes += length;
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].start < spans[i - 1].end)
      throw std::invalid_argument(name_ + ": region " + region->name + " overlaps another region");
  base_.bytes -= region->bytes;
  spans_ = std::move(spans);
  if (shares_model) tagged_[region->tag] = region.get();
  regions_.push_back(std::move(region));
}

Device::RegionView Device::region(std::size_t i) const {
  const Region& r = *regions_.at(i);
  return {r.name, r.durability, r.stats, r.bytes};
}

std::string Device::region_model_description(std::size_t i) const {
  const Region& r = *regions_.at(i);
  if (r.shares_model) return "the " + name_ + " device's own: " + model_description();
  std::lock_guard lock(r.model_mutex);
  return r.model ? r.model->describe() : "none";
}

template <typename Fn>
void Device::for_each_piece(std::uint64_t offset, std::uint64_t length, Fn&& fn) {
  if (spans_.empty() || length == 0) {
    fn(base_, offset, length);
    return;
  }
  const std::uint64_t end = offset + length;
  auto it = std::upper_bound(spans_.begin(), spans_.end(), offset,
                             [](std::uint64_t o, const Span& s) { return o < s.start; });
  if (it != spans_.begin() && std::prev(it)->end > offset) --it;
  std::uint64_t pos = offset;
  while (pos < end) {
    if (it == spans_.end() || it->start >= end) {
      fn(base_, pos, end - pos);
      return;
    }
    if (it->start > pos) {
      fn(base_, pos, it->start - pos);
      pos = it->start;
    }
    const std::uint64_t piece_end = std::min(it->end, end);
    fn(*regions_[it->index], pos, piece_end - pos);
    pos = piece_end;
    ++it;
  }
}

template <typename StoreOp>
void Device::land_in_order(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, const void* data,
                           StoreOp& store_op, Landed& landed) {
  Recorder::PendingChange frame;  // goes after `order`: the copy is made outside write_order_
  std::lock_guard order(write_order_);
  landed.recorder = recorder_.load(std::memory_order_acquire);
  if (landed.recorder != nullptr) {
    frame = landed.recorder->begin_change(recorder_index_.load(std::memory_order_relaxed), frame_kind(op), offset,
                                          static_cast<std::uint32_t>(length), data, fua);
    landed.recorded = frame.id();
  }
  if (log_) landed.entry = log_->begin(*store_, offset, static_cast<std::uint32_t>(length), data);
  store_op();
}

template <typename StoreOp>
void Device::serve(Region& region, IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, const void* data,
                   StoreOp&& store_op) {
  DeviceStats& stats = region.stats;
  const std::int64_t depth = stats_on_ ? stats.arrive() : 0;
  const Nanos arrived = clock_->now();  // the model's "now" too
  IoTiming timing;
  Region& timer = region.shares_model ? base_ : region;
  bool modelled = false;
  {
    std::lock_guard lock(timer.model_mutex);
    if (timer.model) {
      timing = timer.model->submit(IoRequest{op, offset, length, fua, region.tag}, arrived);
      modelled = true;
    }
  }
  if (stats_on_ && modelled) {
    // Whose cached writes went to the media: on the device's own model each
    // tag is a region; a region's own model knows only its writes.
    for (std::size_t tag = 0; tag < kIoTags; ++tag)
      if (timing.destaged_by_tag[tag] > 0) {
        Region* owner = &timer == &base_ ? tagged_[tag] : &timer;
        if (owner != nullptr) owner->stats.destaged(timing.destaged_by_tag[tag]);
      }
  }
  const bool moves_data = op == IoOp::read || op == IoOp::write;
  const bool sequential =
      stats_on_ && moves_data && region.last_end.exchange(offset + length, std::memory_order_relaxed) == offset;
  const bool changes = op == IoOp::write || op == IoOp::zero || op == IoOp::trim;
  auto record = [&](bool failed, Nanos now) {
    if (stats_on_) stats.record(op, length, static_cast<std::uint64_t>(now - arrived), depth, timing, sequential, failed);
  };
  auto fail = [&] { record(true, clock_->now()); };

  Landed landed;
  std::uint64_t epoch = 0;
  try {
    if (log_) {
      std::shared_lock power(power_mutex_);
      if (!powered_) throw IoError(EIO, name_ + ": the power is off (POST /power-on)");
      epoch = power_epoch_;
      if (changes)
        land_in_order(op, offset, length, fua, data, store_op, landed);
      else
        store_op();
    } else if (changes && changes_ordered_.load(std::memory_order_relaxed)) {
      land_in_order(op, offset, length, fua, data, store_op, landed);
    } else {
      store_op();
    }
  } catch (...) {
    // A write that failed is not tracked any more: its bytes are whatever
    // landed, and an open entry would keep the log from ever shrinking.
    if (landed.entry != 0) log_->acknowledge(landed.entry, true);
    if (landed.recorded != 0) landed.recorder->failed(recorder_index_.load(std::memory_order_relaxed), landed.recorded);
    fail();
    throw;
  }
  if (timing.done > 0) clock_->wait_until(timing.done);
  if (log_) {
    std::shared_lock power(power_mutex_);
    if (power_epoch_ != epoch) {  // the power went while we waited: never acknowledged
      fail();
      throw IoError(EIO, name_ + ": the power was cut before the request completed");
    }
    if (changes) log_->acknowledge(landed.entry, durable(region, fua));
  }
  if (landed.recorded != 0)
    landed.recorder->ack(recorder_index_.load(std::memory_order_relaxed), landed.recorded, durable(region, fua));
  // One clock read serves the statistics and the observer.
  const Nanos completed = stats_on_ || observer_ != nullptr ? clock_->now() : 0;
  record(false, completed);
  if (stats_on_ && timing.done > 0) stats.late(static_cast<std::uint64_t>(std::max<Nanos>(completed - timing.done, 0)));
  if (observer_ != nullptr) {
    observer_->observe(ObservedRequest{op, offset, length, fua, static_cast<const std::uint8_t*>(data),
                                       &region != &base_, arrived, std::max(completed, timing.done),
                                       timing.seek + timing.rotation + timing.transfer});
  }
}

void Device::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  for_each_piece(offset, count, [&](Region& r, std::uint64_t at, std::uint64_t n) {
    char* part = static_cast<char*>(buf) + (at - offset);
    serve(r, IoOp::read, at, n, false, nullptr,
          [&] { store_->read(part, static_cast<std::uint32_t>(n), at); });
  });
}

void Device::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua) {
  for_each_piece(offset, count, [&](Region& r, std::uint64_t at, std::uint64_t n) {
    const char* part = static_cast<const char*>(buf) + (at - offset);
    serve(r, IoOp::write, at, n, fua, part,
          [&] { store_->write(part, static_cast<std::uint32_t>(n), at, durable(r, fua)); });
  });
}

void Device::zero(std::uint32_t count, std::uint64_t offset, bool fua) {
  for_each_piece(offset, count, [&](Region& r, std::uint64_t at, std::uint64_t n) {
    serve(r, IoOp::zero, at, n, fua, nullptr,
          [&] { store_->zero(static_cast<std::uint32_t>(n), at, durable(r, fua)); });
  });
}

void Device::trim(std::uint32_t count, std::uint64_t offset, bool fua) {
  for_each_piece(offset, count, [&](Region& r, std::uint64_t at, std::uint64_t n) {
    serve(r, IoOp::trim, at, n, fua, nullptr,
          [&] { store_->trim(static_cast<std::uint32_t>(n), at, durable(r, fua)); });
  });
}

void Device::flush() {
  // What the flush covers is fixed when it arrives, once for all of its
  // regions: the writes acknowledged so far. They are durable when every
  // region's flush has completed, not when one has (a write acknowledged
  // while the disk's flush waited arrived after the flush).
  std::uint64_t covered = 0, epoch = 0;
  if (log_) {
    std::shared_lock power(power_mutex_);
    covered = log_->flush_begin();
    epoch = power_epoch_;
  }
  Recorder* const recorder = recorder_.load(std::memory_order_acquire);
  const std::uint8_t index = recorder_index_.load(std::memory_order_relaxed);
  const std::uint64_t recorded = recorder != nullptr ? recorder->flush(index) : 0;
  // Every region flushes; a region on the device's own model adds no flush
  // of its own. Every acknowledged write of an on-acknowledge region is
  // durable already.
  auto one = [&](Region& r) {
    serve(r, IoOp::flush, 0, 0, false, nullptr, [&] {
      if (r.durability == Durability::on_flush) store_->flush();
    });
  };
  one(base_);
  for (const auto& r : regions_)
    if (!r->shares_model) one(*r);
  if (log_) {
    std::shared_lock power(power_mutex_);
    if (power_epoch_ == epoch) log_->flush_end(covered);  // else serve() threw EIO
  }
  if (recorded != 0) recorder->flush_done(index, recorded);
}

void Device::set_recorder(Recorder* recorder, std::uint8_t index) {
  recorder_index_.store(index, std::memory_order_relaxed);
  recorder_.store(recorder, std::memory_order_release);
  if (recorder != nullptr) changes_ordered_.store(true, std::memory_order_relaxed);
}

void Device::reset_stats() {
  base_.stats.reset();
  for (const auto& r : regions_) r->stats.reset();
}

void Device::enable_power_loss(std::uint64_t log_limit) { log_ = std::make_unique<WriteLog>(log_limit); }

CrashReport Device::cut_power(CrashPolicy policy) {
  if (!log_) throw std::invalid_argument(name_ + ": power loss is not enabled");
  if (!policy.atomic_unit) policy.atomic_unit = atomic_unit();  // the model's, as it is before the cut
  std::unique_lock power(power_mutex_);
  powered_ = false;
  ++power_epoch_;
  restart_models();
  return log_->cut(*store_, policy);
}

void Device::restart_models() {
  for (Region* r : all_regions()) {
    std::lock_guard lock(r->model_mutex);
    if (r->model) r->model = r->model->restarted();
  }
}

void Device::power_on() {
  std::unique_lock power(power_mutex_);
  powered_ = true;
}

bool Device::powered() const {
  std::shared_lock power(power_mutex_);
  return powered_;
}

void Device::set_model(std::unique_ptr<TimingModel> model) {
  if (model && model->volatile_cache() != (base_.durability == Durability::on_flush))
    throw std::invalid_argument("this model would make " + name_ + " " +
                                (model->volatile_cache() ? "durable only after flush" : "durable on acknowledgement") +
                                ", but it is " + std::string(to_string(base_.durability)) +
                                " for as long as the server runs (restart it with the new model)");
  std::lock_guard lock(base_.model_mutex);
  base_.model = std::move(model);
}

std::string Device::model_description() const {
  std::lock_guard lock(base_.model_mutex);
  return base_.model ? base_.model->describe() : "none";
}

std::uint64_t Device::atomic_unit() const {
  std::lock_guard lock(base_.model_mutex);
  return base_.model ? base_.model->atomic_unit() : 512;
}

std::string Device::describe() const {
  std::string text =
      name_ + ": " + format_size(size()) + ", " + store_->describe() + ", " + std::string(to_string(base_.durability));
  {
    std::lock_guard lock(base_.model_mutex);
    if (base_.model) text += ", " + base_.model->describe();
  }
  text += "; to the host: " + traits_.describe();
  for (std::size_t i = 0; i < regions_.size(); ++i)
    text += "; region " + regions_[i]->name + " (" + format_size(regions_[i]->bytes) + "): " +
            std::string(to_string(regions_[i]->durability)) + ", " + region_model_description(i);
  return text;
}

}  // namespace nvj
