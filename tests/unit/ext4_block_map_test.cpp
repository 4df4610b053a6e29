// SPDX-License-Identifier: BSD-3-Clause
// BlockMap: the used blocks of an image being built, as runs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "fscore/ext4/block_map.h"

namespace ext4_block_map_test {

using fscore::ext4::BlockMap;
using fscore::ext4::BlockRun;
using fscore::ext4::NoSpaceError;

namespace {

// The same map as one bool per block, to check BlockMap against.
struct NaiveMap {
  std::uint64_t first, end;
  std::vector<bool> used;
  NaiveMap(std::uint64_t f, std::uint64_t e) : first(f), end(e), used(e, false) {}
  bool is_free(std::uint64_t start, std::uint64_t count) const {
    if (start < first || start + count > end) return false;
    for (std::uint64_t b = start; b < start + count; ++b)
      if (used[b]) return false;
    return true;
  }
  void mark(std::uint64_t start, std::uint64_t count) {
    for (std::uint64_t b = start; b < start + count; ++b) used[b] = true;
  }
  std::uint64_t used_in(std::uint64_t a, std::uint64_t b) const {
    std::uint64_t n = 0;
    for (std::uint64_t i = a; i < b && i < end; ++i) n += used[i] ? 1u : 0u;
    return n;
  }
  // Runs of used blocks that touch each other count as one.
  std::size_t runs() const {
    std::size_t n = 0;
    for (std::uint64_t b = 0; b < end; ++b)
      if (used[b] && (b == 0 || !used[b - 1])) ++n;
    return n;
  }
};

std::uint64_t total(const std::vector<BlockRun>& runs) {
  std::uint64_t n = 0;
  for (const BlockRun& r : runs) n += r.count;
  return n;
}

}  // namespace

TEST_CASE("block map merges runs that touch and keeps the others apart", "[ext4][block_map]") {
  BlockMap m(1, 1000);
  CHECK(m.free_blocks() == 999u);
  CHECK(m.runs() == 0u);
  m.mark(10, 5);
  m.mark(15, 5);  // touches the run before
  CHECK(m.runs() == 1u);
  m.mark(30, 5);
  CHECK(m.runs() == 2u);
  m.mark(25, 5);  // touches the run after
  CHECK(m.runs() == 2u);
  m.mark(20, 5);  // fills the gap between them
  CHECK(m.runs() == 1u);
  CHECK(m.used_in(0, 1000) == 25u);
  CHECK(m.used_in(12, 32) == 20u);
  CHECK(m.used_in(35, 1000) == 0u);
  CHECK(m.free_blocks() == 999u - 25u);
  m.mark(40, 0);  // nothing
  CHECK(m.runs() == 1u);
  CHECK(m.free_blocks() == 999u - 25u);
}

TEST_CASE("block map refuses runs that are used or outside it", "[ext4][block_map]") {
  BlockMap m(1, 100);
  m.mark(50, 10);
  CHECK_FALSE(m.is_free(55, 1));
  CHECK_FALSE(m.is_free(45, 6));  // overlaps the start
  CHECK_FALSE(m.is_free(59, 2));  // overlaps the end
  CHECK(m.is_free(45, 5));
  CHECK(m.is_free(60, 40));
  CHECK_FALSE(m.is_free(60, 41));  // past the end
  CHECK_FALSE(m.is_free(0, 1));    // before the first block
  CHECK_THROWS_AS(m.mark(55, 1), std::logic_error);
  CHECK_THROWS_AS(m.mark(40, 20), std::logic_error);
  CHECK_THROWS_AS(m.mark(0, 1), std::logic_error);
  CHECK_THROWS_AS(m.mark(99, 2), std::logic_error);
  CHECK(m.used_in(0, 100) == 10u);  // nothing changed
}

TEST_CASE("block map allocate_contiguous takes the first fitting gap from the goal", "[ext4][block_map]") {
  BlockMap m(0, 100);
  m.mark(50, 10);
  m.mark(70, 5);
  // [45, 50) is too small for 8: the next gap that fits is [60, 70).
  const auto a = m.allocate_contiguous(8, 45);
  REQUIRE(a.has_value());
  CHECK(*a == 60u);
  CHECK(m.used_in(60, 68) == 8u);
  // From a goal inside a used run, the search starts after it.
  const auto b = m.allocate_contiguous(3, 52);
  REQUIRE(b.has_value());
  CHECK(*b == 75u);
  const auto c = m.allocate_contiguous(4, 0);
  REQUIRE(c.has_value());
  CHECK(*c == 0u);
}

TEST_CASE("block map allocate_contiguous wraps to the start once", "[ext4][block_map]") {
  BlockMap m(10, 100);
  m.mark(80, 20);  // nothing free after 80
  const auto a = m.allocate_contiguous(15, 85);
  REQUIRE(a.has_value());
  CHECK(*a == 10u);
  // A gap before the goal that is too small is no use either.
  m.mark(40, 40);  // free now: [25, 40)
  CHECK_FALSE(m.allocate_contiguous(16, 50).has_value());
  const auto b = m.allocate_contiguous(15, 50);
  REQUIRE(b.has_value());
  CHECK(*b == 25u);
  CHECK(m.free_blocks() == 0u);
  CHECK_FALSE(m.allocate_contiguous(1, 10).has_value());
}

TEST_CASE("block map allocate takes pieces across used runs in order from the goal", "[ext4][block_map]") {
  BlockMap m(0, 100);
  m.mark(20, 10);
  m.mark(40, 10);
  m.mark(90, 10);
  // From 15: [15, 20), [30, 40), [50, 55).
  const std::vector<BlockRun> runs = m.allocate(20, 15);
  REQUIRE(runs.size() == 3u);
  CHECK(runs[0].start == 15u);
  CHECK(runs[0].count == 5u);
  CHECK(runs[1].start == 30u);
  CHECK(runs[1].count == 10u);
  CHECK(runs[2].start == 50u);
  CHECK(runs[2].count == 5u);
  CHECK(m.used_in(0, 100) == 50u);
  // Past the end it wraps: [55, 90) then from 0.
  const std::vector<BlockRun> more = m.allocate(40, 55);
  REQUIRE(more.size() == 2u);
  CHECK(more[0].start == 55u);
  CHECK(more[0].count == 35u);
  CHECK(more[1].start == 0u);
  CHECK(more[1].count == 5u);
  CHECK(m.free_blocks() == 10u);
}

TEST_CASE("block map allocate raises NoSpaceError and changes nothing", "[ext4][block_map]") {
  BlockMap m(1, 65);
  m.mark(10, 20);
  const std::uint64_t free_before = m.free_blocks();
  CHECK(free_before == 44u);
  CHECK_THROWS_AS(m.allocate(45, 1), NoSpaceError);
  CHECK(m.free_blocks() == free_before);
  const std::vector<BlockRun> all = m.allocate(44, 40);
  CHECK(total(all) == 44u);
  CHECK(m.free_blocks() == 0u);
  CHECK_THROWS_AS(m.allocate(1, 1), NoSpaceError);
  // NoSpaceError is a runtime_error with a message.
  try {
    m.allocate(3, 1);
    FAIL("allocate did not throw");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find('3') != std::string::npos);
  }
}

TEST_CASE("block map agrees with a naive bitmap under random marks and allocations", "[ext4][block_map]") {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 20; ++round) {
    const std::uint64_t first = rng() % 3;
    const std::uint64_t end = 500 + rng() % 3000;
    BlockMap m(first, end);
    NaiveMap n(first, end);
    for (int step = 0; step < 300; ++step) {
      const std::uint64_t start = first + rng() % (end - first);
      const std::uint64_t count = 1 + rng() % 40;
      const int op = static_cast<int>(rng() % 3);
      if (op == 0) {
        CHECK(m.is_free(start, count) == n.is_free(start, count));
        if (n.is_free(start, count)) {
          m.mark(start, count);
          n.mark(start, count);
        }
      } else if (op == 1) {
        const auto at = m.allocate_contiguous(count, start);
        if (at) {
          REQUIRE(n.is_free(*at, count));
          n.mark(*at, count);
        }
      } else if (n.used_in(0, end) + count <= end - first) {
        const std::vector<BlockRun> runs = m.allocate(count, start);
        CHECK(total(runs) == count);
        for (const BlockRun& r : runs) {
          REQUIRE(n.is_free(r.start, r.count));
          n.mark(r.start, r.count);
        }
      }
    }
    CHECK(m.runs() == n.runs());
    CHECK(m.free_blocks() == (end - first) - n.used_in(0, end));
    for (int q = 0; q < 50; ++q) {
      const std::uint64_t a = rng() % end;
      const std::uint64_t b = a + rng() % (end - a + 1);
      CHECK(m.used_in(a, b) == n.used_in(a, b));
    }
    // Render windows at any alignment: bit i is block start + i.
    for (int w = 0; w < 30; ++w) {
      const std::uint64_t start = rng() % end;
      const std::uint64_t bits = 1 + rng() % (end - start + 200);  // may run past the end
      std::vector<std::uint8_t> bitmap((bits + 7) / 8, 0);
      m.render(start, bits, bitmap);
      std::vector<std::uint8_t> expected((bits + 7) / 8, 0);
      for (std::uint64_t i = 0; i < bits; ++i)
        if (start + i < end && n.used[start + i]) expected[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
      CAPTURE(round, start, bits);
      CHECK(bitmap == expected);
    }
  }
}

TEST_CASE("block map used_in counts partial runs at both ends", "[ext4][block_map]") {
  BlockMap m(0, 1u << 20);
  m.mark(100, 100);
  m.mark(1000, 1);
  m.mark(500000, 300000);
  CHECK(m.used_in(150, 160) == 10u);
  CHECK(m.used_in(0, 150) == 50u);
  CHECK(m.used_in(199, 1001) == 2u);
  CHECK(m.used_in(200, 1000) == 0u);
  CHECK(m.used_in(600000, 1u << 20) == 200000u);
  CHECK(m.used_in(0, 1u << 20) == 300101u);
  CHECK(m.runs() == 3u);
}

TEST_CASE("block map renders a large run with whole bytes and ragged edges", "[ext4][block_map]") {
  BlockMap m(0, 8192);
  m.mark(3, 2000);  // starts and ends mid-byte
  std::vector<std::uint8_t> bitmap(1024, 0);
  m.render(0, 8192, bitmap);
  CHECK(bitmap[0] == 0xF8);  // blocks 3..7
  for (std::size_t i = 1; i < 250; ++i) CHECK(bitmap[i] == 0xFF);
  CHECK(bitmap[250] == 0x07);  // blocks 2000..2002
  CHECK(bitmap[251] == 0x00);
  // A window that starts inside the run.
  std::vector<std::uint8_t> window(2, 0);
  m.render(2000, 16, window);
  CHECK(window[0] == 0x07);
  CHECK(window[1] == 0x00);
}

}  // namespace ext4_block_map_test
