// SPDX-License-Identifier: BSD-3-Clause
#include "server/store/memory_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "server/store/io_error.h"

namespace nvj {

MemoryStore::MemoryStore(std::uint64_t size)
    : size_(size), directory_((size + kPageSize * kPagesPerChunk - 1) / (kPageSize * kPagesPerChunk)) {
  if (size > kMaxSize) throw std::length_error("sparse memory store larger than 256 TiB");
}

namespace {

constexpr std::size_t kChunkBytes = MemoryStore::kPagesPerChunk * MemoryStore::kPageSize;

}  // namespace

MemoryStore::~MemoryStore() {
  for (auto& entry : directory_) {
    Chunk* chunk = entry.load(std::memory_order_relaxed);
    if (chunk == nullptr) continue;
    ::munmap(chunk->base, kChunkBytes);
    delete chunk;
  }
}

template <typename Fn>
void MemoryStore::for_each_page(std::uint64_t offset, std::uint64_t count, Fn&& fn) {
  std::uint64_t done = 0;
  while (done < count) {
    const std::uint64_t pos = offset + done;
    const std::uint64_t page = pos / kPageSize;
    const std::uint64_t in_page = pos % kPageSize;
    const std::uint64_t len = std::min(kPageSize - in_page, count - done);
    fn(page, in_page, len, done);
    done += len;
  }
}

MemoryStore::Chunk* MemoryStore::chunk_for(std::uint64_t page, bool create) {
  auto& entry = directory_[page / kPagesPerChunk];
  Chunk* chunk = entry.load(std::memory_order_acquire);
  if (chunk != nullptr || !create) return chunk;
  auto fresh = std::make_unique<Chunk>();
  void* base = ::mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw IoError(errno == ENOMEM ? ENOMEM : errno, "mmap of a 32 MiB chunk");
  fresh->base = static_cast<unsigned char*>(base);
  if (entry.compare_exchange_strong(chunk, fresh.get(), std::memory_order_acq_rel)) return fresh.release();
  ::munmap(fresh->base, kChunkBytes);
  return chunk;  // another thread won; `chunk` now holds its pointer
}

void MemoryStore::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  auto* out = static_cast<unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t pos) {
    const Chunk* chunk = chunk_for(page, false);
    const std::uint64_t i = page % kPagesPerChunk;
    std::lock_guard lock(stripe(page));
    if (chunk == nullptr || !chunk->test(i))
      std::memset(out + pos, 0, len);
    else
      std::memcpy(out + pos, chunk->base + i * kPageSize + in_page, len);
  });
}

void MemoryStore::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool /*durable*/) {
  const auto* in = static_cast<const unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t pos) {
    Chunk* chunk = chunk_for(page, true);
    const std::uint64_t i = page % kPagesPerChunk;
    std::lock_guard lock(stripe(page));
    // A page that holds no data is all zeroes (never touched, or given back
    // with MADV_DONTNEED), so a partial first write needs nothing more.
    std::memcpy(chunk->base + i * kPageSize + in_page, in + pos, len);
    if (!chunk->test(i)) {
      chunk->set(i);
      allocated_pages_.fetch_add(1, std::memory_order_relaxed);
    }
  });
}

void MemoryStore::zero_range(std::uint64_t offset, std::uint64_t count) {
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t) {
    Chunk* chunk = chunk_for(page, false);
    const std::uint64_t i = page % kPagesPerChunk;
    std::lock_guard lock(stripe(page));
    if (chunk == nullptr || !chunk->test(i)) return;
    unsigned char* bytes = chunk->base + i * kPageSize;
    if (len == kPageSize) {
      // The kernel takes the page back; it reads as zeroes from now on.
      if (::madvise(bytes, kPageSize, MADV_DONTNEED) != 0) {
        std::memset(bytes, 0, kPageSize);
        return;  // still allocated, but zero
      }
      chunk->clear(i);
      allocated_pages_.fetch_sub(1, std::memory_order_relaxed);
    } else {
      std::memset(bytes + in_page, 0, len);
    }
  });
}

void MemoryStore::zero(std::uint32_t count, std::uint64_t offset, bool /*durable*/) { zero_range(offset, count); }

void MemoryStore::trim(std::uint32_t count, std::uint64_t offset, bool /*durable*/) { zero_range(offset, count); }

bool MemoryStore::page_allocated(std::uint64_t page) {
  const Chunk* chunk = chunk_for(page, false);
  std::lock_guard lock(stripe(page));
  return chunk != nullptr && chunk->test(page % kPagesPerChunk);
}

void MemoryStore::extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) {
  const std::uint64_t end = std::min(size_, offset + count);
  Extent run{offset, 0, false};
  bool have_run = false;
  auto emit = [&](std::uint64_t from, std::uint64_t to, bool hole) {
    if (have_run && run.hole == hole) {
      run.length = to - run.offset;
      return;
    }
    if (have_run) sink(run);
    run = Extent{from, to - from, hole};
    have_run = true;
  };
  std::uint64_t pos = offset;
  while (pos < end) {
    const std::uint64_t page = pos / kPageSize;
    if (chunk_for(page, false) == nullptr) {
      // A whole missing chunk is one hole: skip it without looking at pages.
      const std::uint64_t chunk_end = (page / kPagesPerChunk + 1) * kPagesPerChunk * kPageSize;
      const std::uint64_t to = std::min(end, chunk_end);
      emit(pos, to, true);
      pos = to;
      continue;
    }
    const std::uint64_t to = std::min(end, (page + 1) * kPageSize);
    emit(pos, to, !page_allocated(page));
    pos = to;
  }
  if (have_run) sink(run);
}

}  // namespace nvj
