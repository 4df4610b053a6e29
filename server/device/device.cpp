#include "server/device/device.h"

#include <cerrno>
#include <stdexcept>

#include "server/lab/size.h"
#include "server/store/io_error.h"

namespace nvj {

namespace {

Clock& default_clock() {
  static MonotonicClock clock;
  return clock;
}

}  // namespace

Device::Device(std::string name, std::unique_ptr<Store> store, Durability durability,
               std::unique_ptr<TimingModel> model, Clock* clock)
    : name_(std::move(name)),
      store_(std::move(store)),
      durability_(durability),
      model_(std::move(model)),
      clock_(clock != nullptr ? clock : &default_clock()) {}

template <typename StoreOp>
void Device::serve(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, const void* data,
                   StoreOp&& store_op) {
  const std::int64_t depth = stats_on_ ? stats_.arrive() : 0;
  const Nanos arrived = clock_->now();  // the model's "now" too
  IoTiming timing;
  {
    std::lock_guard lock(model_mutex_);
    if (model_) timing = model_->submit(IoRequest{op, offset, length, fua}, arrived);
  }
  const bool moves_data = op == IoOp::read || op == IoOp::write;
  const bool sequential =
      stats_on_ && moves_data && last_end_.exchange(offset + length, std::memory_order_relaxed) == offset;
  const bool changes = op == IoOp::write || op == IoOp::zero || op == IoOp::trim;
  auto record = [&](bool failed) {
    if (stats_on_)
      stats_.record(op, length, static_cast<std::uint64_t>(clock_->now() - arrived), depth, timing, sequential,
                    failed);
  };
  auto fail = [&] { record(true); };

  WriteLog::Id entry = 0;
  std::uint64_t covered = 0;
  std::uint64_t epoch = 0;
  try {
    if (log_) {
      std::shared_lock power(power_mutex_);
      if (!powered_) throw IoError(EIO, name_ + ": the power is off (POST /power-on)");
      epoch = power_epoch_;
      if (changes) {
        std::lock_guard order(write_order_);
        entry = log_->begin(*store_, offset, static_cast<std::uint32_t>(length), data);
        store_op();
      } else {
        if (op == IoOp::flush) covered = log_->flush_begin();
        store_op();
      }
    } else {
      store_op();
    }
  } catch (...) {
    // A write that failed is not tracked any more: its bytes are whatever
    // landed, and an open entry would keep the log from ever shrinking.
    if (entry != 0) log_->acknowledge(entry, true);
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
    if (changes) log_->acknowledge(entry, durable(fua));
    if (op == IoOp::flush) log_->flush_end(covered);
  }
  record(false);
}

void Device::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  serve(IoOp::read, offset, count, false, nullptr, [&] { store_->read(buf, count, offset); });
}

void Device::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::write, offset, count, fua, buf, [&] { store_->write(buf, count, offset, durable(fua)); });
}

void Device::zero(std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::zero, offset, count, fua, nullptr, [&] { store_->zero(count, offset, durable(fua)); });
}

void Device::trim(std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::trim, offset, count, fua, nullptr, [&] { store_->trim(count, offset, durable(fua)); });
}

void Device::flush() {
  serve(IoOp::flush, 0, 0, false, nullptr, [&] {
    // Every acknowledged write of an on-acknowledge device is durable already.
    if (durability_ == Durability::on_flush) store_->flush();
  });
}

void Device::enable_power_loss(std::uint64_t log_limit) { log_ = std::make_unique<WriteLog>(log_limit); }

CrashReport Device::cut_power(const CrashPolicy& policy) {
  if (!log_) throw std::invalid_argument(name_ + ": power loss is not enabled");
  std::unique_lock power(power_mutex_);
  powered_ = false;
  ++power_epoch_;
  {
    std::lock_guard lock(model_mutex_);
    if (model_) model_ = model_->restarted();
  }
  return log_->cut(*store_, policy);
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
  if (model && model->volatile_cache() != (durability_ == Durability::on_flush))
    throw std::invalid_argument("this model would make " + name_ + " " +
                                (model->volatile_cache() ? "durable only after flush" : "durable on acknowledgement") +
                                ", but it is " + std::string(to_string(durability_)) +
                                " for as long as the server runs (restart it with the new model)");
  std::lock_guard lock(model_mutex_);
  model_ = std::move(model);
}

std::string Device::model_description() const {
  std::lock_guard lock(model_mutex_);
  return model_ ? model_->describe() : "none";
}

std::string Device::describe() const {
  std::string text =
      name_ + ": " + format_size(size()) + ", " + store_->describe() + ", " + std::string(to_string(durability_));
  std::lock_guard lock(model_mutex_);
  if (model_) text += ", " + model_->describe();
  return text;
}

}  // namespace nvj
