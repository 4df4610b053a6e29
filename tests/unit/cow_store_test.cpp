// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "server/store/cow_store.h"
#include "server/store/memory_store.h"

namespace cow_store_test {

using nvj::CowStore;
using nvj::Extent;
using nvj::MemoryStore;

namespace {

std::vector<unsigned char> read_all(nvj::Store& s) {
  std::vector<unsigned char> out(s.size());
  for (std::uint64_t at = 0; at < s.size(); at += 65536)
    s.read(out.data() + at, static_cast<std::uint32_t>(std::min<std::uint64_t>(65536, s.size() - at)), at);
  return out;
}

std::vector<Extent> extents_of(nvj::Store& s) {
  std::vector<Extent> out;
  s.extents(0, s.size(), [&](const Extent& e) { out.push_back(e); });
  return out;
}

// The same random changes (writes at any offset and length, zeroes, trims)
// applied to the store and to a plain copy of its bytes.
void scribble(nvj::Store& s, std::vector<unsigned char>& model, std::mt19937_64& rng, int n) {
  for (int i = 0; i < n; ++i) {
    const std::uint64_t at = rng() % (s.size() - 1);
    const auto len = static_cast<std::uint32_t>(1 + rng() % std::min<std::uint64_t>(20000, s.size() - at - 1));
    switch (rng() % 4) {
      case 0:
        s.zero(len, at, false);
        std::fill_n(model.begin() + static_cast<long>(at), len, 0);
        break;
      case 1:
        s.trim(len, at, false);
        std::fill_n(model.begin() + static_cast<long>(at), len, 0);
        break;
      default: {
        std::vector<unsigned char> bytes(len);
        for (auto& b : bytes) b = static_cast<unsigned char>(rng() | 1);
        s.write(bytes.data(), len, at, false);
        std::copy(bytes.begin(), bytes.end(), model.begin() + static_cast<long>(at));
      }
    }
  }
}

}  // namespace

TEST_CASE("a cow store passes everything through until a base is kept", "[cow_store]") {
  auto below = std::make_unique<MemoryStore>(1 << 20);
  MemoryStore* raw = below.get();
  CowStore s(std::move(below));
  const std::vector<unsigned char> bytes(5000, 0xAB);
  s.write(bytes.data(), 5000, 100, false);
  std::vector<unsigned char> back(5000);
  raw->read(back.data(), 5000, 100);
  CHECK(back == bytes);
  CHECK_FALSE(s.kept());
  CHECK(s.pages_above() == 0);
  CHECK_THROWS_AS(s.restore(), std::logic_error);
}

TEST_CASE("a cow store goes back to its base, whatever was written since", "[cow_store]") {
  // 1 MiB and 1000 bytes: the last page is a part page.
  const std::uint64_t size = (1 << 20) + 1000;
  auto below = std::make_unique<MemoryStore>(size);
  MemoryStore* raw = below.get();
  CowStore s(std::move(below));
  std::mt19937_64 rng(7);
  std::vector<unsigned char> model(size, 0);
  scribble(s, model, rng, 50);
  s.keep();
  const std::vector<unsigned char> base = model;
  const std::vector<unsigned char> base_below = read_all(*raw);
  REQUIRE(base_below == base);
  for (int round = 0; round < 5; ++round) {
    scribble(s, model, rng, 40);
    REQUIRE(read_all(s) == model);   // reads see the changes, partial pages merged with the base
    CHECK(read_all(*raw) == base);   // the store below is never written
    CHECK(s.pages_above() > 0);
    s.restore();
    model = base;
    REQUIRE(read_all(s) == base);
    CHECK(s.pages_above() == 0);
  }
}

TEST_CASE("a second keep makes the present the base", "[cow_store]") {
  const std::uint64_t size = 256 * 1024;
  CowStore s(std::make_unique<MemoryStore>(size));
  std::mt19937_64 rng(11);
  std::vector<unsigned char> model(size, 0);
  s.keep();
  scribble(s, model, rng, 30);
  s.keep();
  CHECK(s.pages_above() == 0);
  const std::vector<unsigned char> second = model;
  scribble(s, model, rng, 30);
  s.restore();
  CHECK(read_all(s) == second);
}

TEST_CASE("a cow store's extents cover what it holds", "[cow_store]") {
  const std::uint64_t size = 1 << 20;
  CowStore s(std::make_unique<MemoryStore>(size));
  const std::vector<unsigned char> bytes(4096, 1);
  s.write(bytes.data(), 4096, 0, false);
  s.keep();
  s.write(bytes.data(), 4096, 65536, false);
  const std::vector<Extent> e = extents_of(s);
  // Data at page 0 (the base) and page 16 (the layer); holes elsewhere; in
  // order, adjacent runs of one kind merged.
  REQUIRE(e.size() == 4);
  CHECK((e[0].offset == 0 && e[0].length == 4096 && !e[0].hole));
  CHECK((e[1].offset == 4096 && e[1].hole));
  CHECK((e[2].offset == 65536 && e[2].length == 4096 && !e[2].hole));
  CHECK((e[3].offset == 69632 && e[3].length == size - 69632 && e[3].hole));
  s.restore();
  CHECK(extents_of(s).size() == 2);
}

}  // namespace cow_store_test
