// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "server/store/memory_store.h"

namespace memory_store_test {

using nvj::Extent;
using nvj::MemoryStore;

namespace {

std::vector<Extent> extents_of(nvj::Store& s, std::uint64_t offset, std::uint64_t count) {
  std::vector<Extent> out;
  s.extents(offset, count, [&](const Extent& e) { out.push_back(e); });
  return out;
}

std::vector<unsigned char> pattern(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(seed + i * 7);
  return v;
}

}  // namespace

TEST_CASE("a new memory store reads zeroes and holds no pages", "[memory_store]") {
  MemoryStore s(1 << 20);
  std::vector<unsigned char> buf(10000, 0xAA);
  s.read(buf.data(), static_cast<std::uint32_t>(buf.size()), 12345);
  CHECK(std::all_of(buf.begin(), buf.end(), [](unsigned char c) { return c == 0; }));
  CHECK(s.allocated_bytes() == 0);
  const auto e = extents_of(s, 0, 1 << 20);
  REQUIRE(e.size() == 1);
  CHECK(e[0].hole);
  CHECK(e[0].length == 1 << 20);
}

TEST_CASE("writes across page boundaries read back and the rest stays zero", "[memory_store]") {
  MemoryStore s(64 << 20);
  const auto data = pattern(10000, 3);
  s.write(data.data(), 10000, 4000, false);  // pages 0..3, partial at both ends
  std::vector<unsigned char> back(10000);
  s.read(back.data(), 10000, 4000);
  CHECK(back == data);
  std::vector<unsigned char> around(16384);
  s.read(around.data(), 16384, 0);
  CHECK(std::all_of(around.begin(), around.begin() + 4000, [](unsigned char c) { return c == 0; }));
  CHECK(std::all_of(around.begin() + 14000, around.end(), [](unsigned char c) { return c == 0; }));
  CHECK(s.allocated_bytes() == 4 * MemoryStore::kPageSize);
}

TEST_CASE("zero and trim free whole pages and clear partial ones", "[memory_store]") {
  MemoryStore s(1 << 20);
  const auto data = pattern(5 * 4096, 9);
  s.write(data.data(), 5 * 4096, 0, false);
  CHECK(s.allocated_bytes() == 5 * 4096);
  s.trim(3 * 4096, 4096 + 100, false);  // frees pages 2 and 3, clears the tail of 1 and head of 4
  CHECK(s.allocated_bytes() == 3 * 4096);
  std::vector<unsigned char> back(5 * 4096);
  s.read(back.data(), 5 * 4096, 0);
  for (std::size_t i = 0; i < back.size(); ++i) {
    const bool cleared = i >= 4096 + 100 && i < 4 * 4096 + 100;
    REQUIRE(back[i] == (cleared ? 0 : data[i]));
  }
  s.zero(4096, 0, false);
  CHECK(s.allocated_bytes() == 2 * 4096);
}

TEST_CASE("extents merge runs and respect the range", "[memory_store]") {
  MemoryStore s(100ull << 20);
  const auto page = pattern(4096, 1);
  s.write(page.data(), 4096, 8192, false);
  s.write(page.data(), 4096, 12288, false);
  s.write(page.data(), 4096, 64ull << 20, false);  // in another chunk
  const auto e = extents_of(s, 0, 100ull << 20);
  REQUIRE(e.size() == 5);
  CHECK((e[0].offset == 0 && e[0].length == 8192 && e[0].hole));
  CHECK((e[1].offset == 8192 && e[1].length == 8192 && !e[1].hole));
  CHECK((e[2].offset == 16384 && e[2].hole && e[2].offset + e[2].length == 64ull << 20));
  CHECK((e[3].offset == 64ull << 20 && e[3].length == 4096 && !e[3].hole));
  CHECK((e[4].hole && e[4].offset + e[4].length == 100ull << 20));
  const auto mid = extents_of(s, 9000, 100);
  REQUIRE(mid.size() == 1);
  CHECK((mid[0].offset == 9000 && mid[0].length == 100 && !mid[0].hole));
}

TEST_CASE("a 16 TiB sparse store costs only what is written", "[memory_store]") {
  MemoryStore s(16ull << 40);
  const auto data = pattern(4096, 5);
  s.write(data.data(), 4096, (16ull << 40) - 4096, false);
  std::vector<unsigned char> back(4096);
  s.read(back.data(), 4096, (16ull << 40) - 4096);
  CHECK(back == data);
  CHECK(s.allocated_bytes() == 4096);
}

TEST_CASE("concurrent writers to interleaved pages all land", "[memory_store]") {
  MemoryStore s(64 << 20);
  constexpr int kThreads = 8;
  constexpr int kPagesEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&s, t] {
      for (int i = 0; i < kPagesEach; ++i) {
        const auto page = pattern(4096, static_cast<unsigned char>(t * 31 + i));
        s.write(page.data(), 4096, static_cast<std::uint64_t>(i * kThreads + t) * 4096, false);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPagesEach; ++i) {
      std::vector<unsigned char> back(4096);
      s.read(back.data(), 4096, static_cast<std::uint64_t>(i * kThreads + t) * 4096);
      REQUIRE(back == pattern(4096, static_cast<unsigned char>(t * 31 + i)));
    }
  CHECK(s.allocated_bytes() == std::uint64_t{kThreads} * kPagesEach * 4096);
}

TEST_CASE("a page given back by trim reads as zero around a later partial write", "[memory_store]") {
  MemoryStore s(1 << 20);
  const auto full = pattern(4096, 7);
  s.write(full.data(), 4096, 8192, false);
  s.trim(4096, 8192, false);
  CHECK(s.allocated_bytes() == 0);
  const auto part = pattern(100, 9);
  s.write(part.data(), 100, 8192 + 1000, false);
  std::vector<unsigned char> back(4096);
  s.read(back.data(), 4096, 8192);
  for (std::size_t i = 0; i < 4096; ++i) REQUIRE(back[i] == (i >= 1000 && i < 1100 ? part[i - 1000] : 0));
  CHECK(s.allocated_bytes() == 4096);
}

}  // namespace memory_store_test
