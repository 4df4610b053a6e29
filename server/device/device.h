// Device: one export as the client sees it. It applies the export's durability
// rule to its store; later layers add the timing model, the write cache and
// the probes (design.md, "A request's way through").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/device/durability.h"
#include "server/store/store.h"

namespace nvj {

class Device {
 public:
  Device(std::string name, std::unique_ptr<Store> store, Durability durability);

  const std::string& name() const { return name_; }
  std::uint64_t size() const { return store_->size(); }
  Durability durability() const { return durability_; }
  const Store& store() const { return *store_; }

  void read(void* buf, std::uint32_t count, std::uint64_t offset) { store_->read(buf, count, offset); }
  void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool fua) {
    store_->write(buf, count, offset, durable(fua));
  }
  void zero(std::uint32_t count, std::uint64_t offset, bool fua) { store_->zero(count, offset, durable(fua)); }
  void trim(std::uint32_t count, std::uint64_t offset, bool fua) { store_->trim(count, offset, durable(fua)); }
  void flush();
  void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) {
    store_->extents(offset, count, sink);
  }

  // "data: 1 GiB, sparse memory, durable after flush or FUA"
  std::string describe() const;

 private:
  bool durable(bool fua) const { return fua || durability_ == Durability::on_acknowledge; }

  const std::string name_;
  const std::unique_ptr<Store> store_;
  const Durability durability_;
};

}  // namespace nvj
