#include "server/store/memory_store.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace nvj {

MemoryStore::MemoryStore(std::uint64_t size)
    : size_(size), directory_((size + kPageSize * kPagesPerChunk - 1) / (kPageSize * kPagesPerChunk)) {
  if (size > kMaxSize) throw std::length_error("sparse memory store larger than 256 TiB");
}

MemoryStore::~MemoryStore() {
  for (auto& entry : directory_) {
    Chunk* chunk = entry.load(std::memory_order_relaxed);
    if (chunk == nullptr) continue;
    for (unsigned char* page : chunk->pages) std::free(page);
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
  if (entry.compare_exchange_strong(chunk, fresh.get(), std::memory_order_acq_rel)) return fresh.release();
  return chunk;  // another thread won; `chunk` now holds its pointer
}

// Caller holds the page's stripe lock.
unsigned char** MemoryStore::slot(std::uint64_t page, bool create) {
  Chunk* chunk = chunk_for(page, create);
  return chunk == nullptr ? nullptr : &chunk->pages[page % kPagesPerChunk];
}

void MemoryStore::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  auto* out = static_cast<unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t pos) {
    std::lock_guard lock(stripe(page));
    unsigned char** s = slot(page, false);
    if (s == nullptr || *s == nullptr)
      std::memset(out + pos, 0, len);
    else
      std::memcpy(out + pos, *s + in_page, len);
  });
}

void MemoryStore::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool /*durable*/) {
  const auto* in = static_cast<const unsigned char*>(buf);
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t pos) {
    std::lock_guard lock(stripe(page));
    unsigned char** s = slot(page, true);
    if (*s == nullptr) {
      // Partial first writes need the rest of the page to read as zero.
      *s = static_cast<unsigned char*>(len == kPageSize ? std::malloc(kPageSize) : std::calloc(1, kPageSize));
      if (*s == nullptr) throw std::bad_alloc();
      allocated_pages_.fetch_add(1, std::memory_order_relaxed);
    }
    std::memcpy(*s + in_page, in + pos, len);
  });
}

void MemoryStore::zero_range(std::uint64_t offset, std::uint64_t count) {
  for_each_page(offset, count, [&](std::uint64_t page, std::uint64_t in_page, std::uint64_t len, std::uint64_t) {
    std::lock_guard lock(stripe(page));
    unsigned char** s = slot(page, false);
    if (s == nullptr || *s == nullptr) return;
    if (len == kPageSize) {
      std::free(*s);
      *s = nullptr;
      allocated_pages_.fetch_sub(1, std::memory_order_relaxed);
    } else {
      std::memset(*s + in_page, 0, len);
    }
  });
}

void MemoryStore::zero(std::uint32_t count, std::uint64_t offset, bool /*durable*/) { zero_range(offset, count); }

void MemoryStore::trim(std::uint32_t count, std::uint64_t offset, bool /*durable*/) { zero_range(offset, count); }

bool MemoryStore::page_allocated(std::uint64_t page) {
  std::lock_guard lock(stripe(page));
  unsigned char** s = slot(page, false);
  return s != nullptr && *s != nullptr;
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
