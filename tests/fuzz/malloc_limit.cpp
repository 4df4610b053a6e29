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

void* operator new(std::size_t bytes) {
  if (bytes > kMallocLimit) {
    std::fprintf(stderr, "fuzz target: an allocation of %zu bytes, more than the %zu MiB limit\n", bytes,
                 kMallocLimit >> 20);
    std::abort();
  }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
