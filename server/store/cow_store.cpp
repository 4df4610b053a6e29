// SPDX-License-Identifier: BSD-3-Clause
#include "server/store/cow_store.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace nvj {

CowStore::CowStore(std::unique_ptr<Store> below)
    : below_(std::move(below)),
      layer_(std::make_unique<MemoryStore>(below_->size())),
      in_layer_((below_->size() / kPageSize + 1 + 63) / 64) {}

template <typename Fn>
void CowStore::for_each_page(std::uint64_t offset, std::uint64_t count, Fn&& fn) {
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t pos = offset + done;
    const std::uint64_t in_page = pos % kPageSize;
    const std::uint64_t len = std::min(kPageSize - in_page, count - done);
    fn(pos / kPageSize, in_page, len, done);
    done += len;
  }
}

bool CowStore::above(std::uint64_t page) const {
  return (in_layer_[page / 64].load(std::memory_order_relaxed) >> (page % 64)) & 1u;
}

void CowStore::mark_above(std::uint64_t page) {
  const std::uint64_t bit = std::uint64_t{1} << (page % 64);
  if ((in_layer_[page / 64].fetch_or(bit, std::memory_order_relaxed) & bit) == 0)
    pages_above_.fetch_add(1, std::memory_order_relaxed);
}

void CowStore::copy_up(std::uint64_t page, bool whole) {
  if (above(page)) return;
  if (!whole) {
    // The page's last bytes may lie past the end of a store whose size is
    // no multiple of a page: only what the store has is copied.
    const std::uint64_t at = page * kPageSize;
    const auto n = static_cast<std::uint32_t>(std::min(kPageSize, size() - at));
    unsigned char bytes[kPageSize];
    below_->read(bytes, n, at);
    layer_->write(bytes, n, at, false);
  }
  mark_above(page);
}

void CowStore::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  if (!kept()) return below_->read(buf, count, offset);
  auto* out = static_cast<unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t, std::uint64_t len, std::uint64_t pos) {
    std::lock_guard lock(stripe(page));
    Store& from = above(page) ? static_cast<Store&>(*layer_) : *below_;
    from.read(out + pos, static_cast<std::uint32_t>(len), offset + pos);
  });
}

void CowStore::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) {
  if (!kept()) return below_->write(buf, count, offset, durable);
  const auto* in = static_cast<const unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t, std::uint64_t len, std::uint64_t pos) {
    std::lock_guard lock(stripe(page));
    copy_up(page, len == kPageSize);
    layer_->write(in + pos, static_cast<std::uint32_t>(len), offset + pos, durable);
  });
}

void CowStore::zero(std::uint32_t count, std::uint64_t offset, bool durable) {
  if (!kept()) return below_->zero(count, offset, durable);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t, std::uint64_t len, std::uint64_t pos) {
    std::lock_guard lock(stripe(page));
    copy_up(page, len == kPageSize);
    layer_->zero(static_cast<std::uint32_t>(len), offset + pos, durable);
  });
}

void CowStore::trim(std::uint32_t count, std::uint64_t offset, bool durable) {
  if (!kept()) return below_->trim(count, offset, durable);
  zero(count, offset, durable);  // reads of a trimmed range return zeroes in every store
}

void CowStore::flush() {
  if (!kept()) below_->flush();  // the base is never written; the layer is memory
}

void CowStore::extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) {
  if (!kept()) return below_->extents(offset, count, sink);
  // The base's runs, with every page of the layer's counted as allocated
  // (it may hold zeroes: allocated is never wrong, only less sparse).
  const std::uint64_t end = std::min(size(), offset + count);
  Extent run{offset, 0, false};
  bool have = false;
  const auto emit = [&](std::uint64_t from, std::uint64_t to, bool hole) {
    if (from >= to) return;
    if (have && run.hole == hole && run.offset + run.length == from) {
      run.length = to - run.offset;
      return;
    }
    if (have) sink(run);
    run = Extent{from, to - from, hole};
    have = true;
  };
  below_->extents(offset, end - offset, [&](const Extent& e) {
    const std::uint64_t e_end = std::min(end, e.offset + e.length);
    if (!e.hole) return emit(e.offset, e_end, false);
    for (std::uint64_t at = e.offset; at < e_end;) {
      const std::uint64_t page = at / kPageSize;
      const std::uint64_t to = std::min(e_end, (page + 1) * kPageSize);
      emit(at, to, !above(page));
      at = to;
    }
  });
  if (have) sink(run);
}

std::string CowStore::describe() const {
  if (!kept()) return below_->describe();
  return below_->describe() + ", its base kept (" + std::to_string(pages_above()) + " pages written since)";
}

// Calls fn(page) for every page the layer holds.
template <typename Fn>
void CowStore::for_each_above(Fn&& fn) {
  for (std::size_t w = 0; w < in_layer_.size(); ++w)
    for (std::uint64_t bits = in_layer_[w].load(std::memory_order_relaxed); bits != 0; bits &= bits - 1)
      fn(w * 64 + static_cast<std::uint64_t>(__builtin_ctzll(bits)));
}

void CowStore::keep() {
  if (!kept()) {
    kept_.store(true, std::memory_order_release);
    return;
  }
  std::vector<unsigned char> bytes(kPageSize);
  for_each_above([&](std::uint64_t page) {
    const std::uint64_t at = page * kPageSize;
    const auto n = static_cast<std::uint32_t>(std::min(kPageSize, size() - at));
    layer_->read(bytes.data(), n, at);
    below_->write(bytes.data(), n, at, true);
  });
  below_->flush();
  restore();
}

void CowStore::restore() {
  if (!kept()) throw std::logic_error("no base was kept");
  for_each_above([&](std::uint64_t page) {
    std::lock_guard lock(stripe(page));
    const std::uint64_t at = page * kPageSize;
    layer_->trim(static_cast<std::uint32_t>(std::min(kPageSize, size() - at)), at, false);
    in_layer_[page / 64].fetch_and(~(std::uint64_t{1} << (page % 64)), std::memory_order_relaxed);
  });
  pages_above_.store(0, std::memory_order_relaxed);
}

}  // namespace nvj
