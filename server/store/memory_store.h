// SPDX-License-Identifier: BSD-3-Clause
// MemoryStore: a sparse RAM disk. Pages are allocated on first write and
// freed by trim and by zeroing whole pages, so a 16 TiB disk costs only what
// was written to it.
//
// Layout: a directory of chunk pointers (allocated lazily, atomically). A
// chunk is one anonymous mapping of 32 MiB, reserved but not committed: the
// kernel supplies a zeroed page on a page's first write, and
// madvise(MADV_DONTNEED) gives it back on trim. A bitmap says which pages hold
// data. No malloc per page: pages are aligned and cost no header. A page's
// bytes and bit are guarded by one of a set of striped mutexes, so requests
// to different pages never contend and reads never see a page being freed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "server/store/store.h"

namespace nvj {

class MemoryStore final : public Store {
 public:
  static constexpr std::uint64_t kPageSize = 4096;
  static constexpr std::uint64_t kPagesPerChunk = 8192;  // 32 MiB per chunk
  static constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 48;  // 256 TiB: a 64 MiB directory

  explicit MemoryStore(std::uint64_t size);
  ~MemoryStore() override;

  std::uint64_t size() const override { return size_; }
  void read(void* buf, std::uint32_t count, std::uint64_t offset) override;
  void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) override;
  void zero(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void trim(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void flush() override {}
  void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) override;
  bool persistent() const override { return false; }
  std::string describe() const override { return "sparse memory"; }

  // Bytes of RAM held by pages (not counting the directory).
  std::uint64_t allocated_bytes() const { return allocated_pages_.load(std::memory_order_relaxed) * kPageSize; }

 private:
  struct Chunk {
    unsigned char* base = nullptr;  // kPagesPerChunk * kPageSize bytes
    std::array<std::atomic<std::uint64_t>, kPagesPerChunk / 64> allocated{};
    bool test(std::uint64_t i) const { return (allocated[i / 64].load(std::memory_order_relaxed) >> (i % 64)) & 1u; }
    void set(std::uint64_t i) { allocated[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_relaxed); }
    void clear(std::uint64_t i) {
      allocated[i / 64].fetch_and(~(std::uint64_t{1} << (i % 64)), std::memory_order_relaxed);
    }
  };
  static constexpr std::size_t kStripes = 1024;

  std::mutex& stripe(std::uint64_t page) { return stripes_[page % kStripes]; }
  Chunk* chunk_for(std::uint64_t page, bool create);
  bool page_allocated(std::uint64_t page);

  // Calls fn(page, offset_in_page, length, buffer_position) for each page
  // touched by [offset, offset + count).
  template <typename Fn>
  static void for_each_page(std::uint64_t offset, std::uint64_t count, Fn&& fn);

  void zero_range(std::uint64_t offset, std::uint64_t count);

  const std::uint64_t size_;
  std::vector<std::atomic<Chunk*>> directory_;
  std::array<std::mutex, kStripes> stripes_;
  std::atomic<std::uint64_t> allocated_pages_{0};
};

}  // namespace nvj
