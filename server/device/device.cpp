#include "server/device/device.h"

#include <stdexcept>

#include "server/lab/size.h"

namespace nvj {

Device::Device(std::string name, std::unique_ptr<Store> store, Durability durability,
               std::unique_ptr<TimingModel> model, Clock* clock)
    : name_(std::move(name)),
      store_(std::move(store)),
      durability_(durability),
      model_(std::move(model)),
      clock_(clock) {
  if (model_ && clock_ == nullptr) throw std::invalid_argument("a device with a timing model needs a clock");
}

Nanos Device::schedule(IoOp op, std::uint64_t offset, std::uint64_t length, bool fua) {
  std::lock_guard lock(model_mutex_);
  if (!model_) return 0;
  return model_->submit(IoRequest{op, offset, length, fua}, clock_->now()).done;
}

void Device::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  const Nanos done = schedule(IoOp::read, offset, count, false);
  store_->read(buf, count, offset);
  complete(done);
}

void Device::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua) {
  const Nanos done = schedule(IoOp::write, offset, count, fua);
  store_->write(buf, count, offset, durable(fua));
  complete(done);
}

void Device::zero(std::uint32_t count, std::uint64_t offset, bool fua) {
  const Nanos done = schedule(IoOp::zero, offset, count, fua);
  store_->zero(count, offset, durable(fua));
  complete(done);
}

void Device::trim(std::uint32_t count, std::uint64_t offset, bool fua) {
  const Nanos done = schedule(IoOp::trim, offset, count, fua);
  store_->trim(count, offset, durable(fua));
  complete(done);
}

void Device::flush() {
  const Nanos done = schedule(IoOp::flush, 0, 0, false);
  // Every acknowledged write of an on-acknowledge device is durable already.
  if (durability_ == Durability::on_flush) store_->flush();
  complete(done);
}

std::string Device::describe() const {
  std::string text =
      name_ + ": " + format_size(size()) + ", " + store_->describe() + ", " + std::string(to_string(durability_));
  std::lock_guard lock(model_mutex_);
  if (model_) text += ", " + model_->describe();
  return text;
}

}  // namespace nvj
