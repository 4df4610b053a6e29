// SPDX-License-Identifier: BSD-3-Clause
// fscore's image sink and source over a server Store, so the image builder
// and reader work on an export's bytes directly.
#pragma once

#include "fscore/block_io.h"
#include "server/store/store.h"

namespace nvj {

class StoreSink final : public fscore::BlockSink {
 public:
  explicit StoreSink(Store& store) : store_(store) {}
  void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override;
  std::uint64_t bytes_written() const { return written_; }

 private:
  Store& store_;
  std::uint64_t written_ = 0;
};

class StoreSource final : public fscore::BlockSource {
 public:
  explicit StoreSource(Store& store) : store_(store) {}
  std::uint64_t size() const override { return store_.size(); }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override;

 private:
  Store& store_;
};

// Whether any byte of the store is allocated (a new store is all holes).
bool store_holds_data(Store& store);

// Deallocates the whole store: it reads as zeros afterwards.
void clear_store(Store& store);

}  // namespace nvj
