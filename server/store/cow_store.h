// SPDX-License-Identifier: BSD-3-Clause
// CowStore: a store that can go back to a moment of itself. Until keep() it
// passes every call through to the store below. keep() makes what that store
// holds the base: from then on it is only read, and every change lands in a
// sparse memory layer above it, page by page (a page written in part is
// copied up whole first). restore() drops the layer: the store holds the
// base again, whatever was written since, at the cost of the pages written.
// The crash lab's explorer runs workload after workload on one server, each
// from the same freshly made filesystem (POST /base/keep, /base/restore).
//
// Thread safety: as Store. keep() and restore() must not run beside a
// change (the caller pauses them: Device::pause_changes); reads beside them
// see the contents before or after.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "server/store/memory_store.h"
#include "server/store/store.h"

namespace nvj {

class CowStore final : public Store {
 public:
  static constexpr std::uint64_t kPageSize = MemoryStore::kPageSize;

  explicit CowStore(std::unique_ptr<Store> below);

  std::uint64_t size() const override { return below_->size(); }
  void read(void* buf, std::uint32_t count, std::uint64_t offset) override;
  void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) override;
  void zero(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void trim(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void flush() override;
  void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) override;
  // A kept base lives in memory above a file store: after keep(), a file
  // store no longer holds what the export holds.
  bool persistent() const override { return below_->persistent() && !kept(); }
  std::string describe() const override;

  // What the store holds now becomes the base. Again later: the layer's
  // pages are written down into the store below, and the layer emptied.
  void keep();
  // Back to the base kept last; std::logic_error before any keep().
  void restore();
  bool kept() const { return kept_.load(std::memory_order_acquire); }
  // Pages written since the last keep() or restore().
  std::uint64_t pages_above() const { return pages_above_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t kStripes = 256;
  std::mutex& stripe(std::uint64_t page) { return stripes_[page % kStripes]; }
  bool above(std::uint64_t page) const;  // since the base: the layer holds it
  void mark_above(std::uint64_t page);
  // Makes `page` the layer's, copying the base's bytes up unless the whole
  // page is about to be replaced. Caller holds its stripe.
  void copy_up(std::uint64_t page, bool whole);
  template <typename Fn>
  void for_each_above(Fn&& fn);
  // Calls fn(page, in_page, length, buffer_position) for each page of the range.
  template <typename Fn>
  static void for_each_page(std::uint64_t offset, std::uint64_t count, Fn&& fn);

  const std::unique_ptr<Store> below_;
  const std::unique_ptr<MemoryStore> layer_;
  // Pages the layer holds, a bit each.
  std::vector<std::atomic<std::uint64_t>> in_layer_;
  std::atomic<bool> kept_{false};
  std::atomic<std::uint64_t> pages_above_{0};
  std::array<std::mutex, kStripes> stripes_;
};

}  // namespace nvj
