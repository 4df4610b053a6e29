#include "server/device/device.h"

#include <stdexcept>

#include "server/lab/size.h"

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
void Device::serve(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua, StoreOp&& store_op) {
  const std::int64_t depth = stats_.arrive();
  const Nanos arrived = clock_->now();
  IoTiming timing;
  {
    std::lock_guard lock(model_mutex_);
    if (model_) timing = model_->submit(IoRequest{op, offset, length, fua}, arrived);
  }
  const bool data = op == IoOp::read || op == IoOp::write;
  const bool sequential = data && last_end_.exchange(offset + length, std::memory_order_relaxed) == offset;
  try {
    store_op();
  } catch (...) {
    stats_.record(op, length, static_cast<std::uint64_t>(clock_->now() - arrived), depth, timing, sequential, true);
    throw;
  }
  if (timing.done > 0) clock_->wait_until(timing.done);
  stats_.record(op, length, static_cast<std::uint64_t>(clock_->now() - arrived), depth, timing, sequential, false);
}

void Device::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  serve(IoOp::read, offset, count, false, [&] { store_->read(buf, count, offset); });
}

void Device::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::write, offset, count, fua, [&] { store_->write(buf, count, offset, durable(fua)); });
}

void Device::zero(std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::zero, offset, count, fua, [&] { store_->zero(count, offset, durable(fua)); });
}

void Device::trim(std::uint32_t count, std::uint64_t offset, bool fua) {
  serve(IoOp::trim, offset, count, fua, [&] { store_->trim(count, offset, durable(fua)); });
}

void Device::flush() {
  serve(IoOp::flush, 0, 0, false, [&] {
    // Every acknowledged write of an on-acknowledge device is durable already.
    if (durability_ == Durability::on_flush) store_->flush();
  });
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
