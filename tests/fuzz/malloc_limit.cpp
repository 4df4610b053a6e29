// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer's -malloc_limit_mb, for fuzz_driver.cpp: the image reader
// promises bounded memory, so a single allocation this large is a finding,
// reported at once rather than found by the machine running out of memory.
// (A translation unit of its own: the compiler must not see these inlined
// next to the allocations they serve.)
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kMallocLimit = std::size_t{256} << 20;

}  // namespace

namespace {

void* limited_malloc(std::size_t bytes) noexcept {
  if (bytes > kMallocLimit) {
    std::fprintf(stderr, "fuzz target: an allocation of %zu bytes, more than the %zu MiB limit\n", bytes,
                 kMallocLimit >> 20);
    std::abort();
  }
  return std::malloc(bytes == 0 ? 1 : bytes);
}

}  // namespace

// Every unaligned form is replaced, so that each allocation is freed by its
// own family: a sanitizer's nothrow new (std::stable_sort's buffer) freed by
// the delete below would be an alloc-dealloc mismatch.
void* operator new(std::size_t bytes) {
  if (void* p = limited_malloc(bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return limited_malloc(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return limited_malloc(bytes); }

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
