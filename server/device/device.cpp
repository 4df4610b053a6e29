#include "server/device/device.h"

#include "server/lab/size.h"

namespace nvj {

Device::Device(std::string name, std::unique_ptr<Store> store, Durability durability)
    : name_(std::move(name)), store_(std::move(store)), durability_(durability) {}

void Device::flush() {
  // Every acknowledged write of an on-acknowledge device is durable already.
  if (durability_ == Durability::on_flush) store_->flush();
}

std::string Device::describe() const {
  return name_ + ": " + format_size(size()) + ", " + store_->describe() + ", " + std::string(to_string(durability_));
}

}  // namespace nvj
