// SPDX-License-Identifier: BSD-3-Clause
// TrafficClassifier on a real ext4 layout (formatted by the server's own
// code into a memory store): a write is checkpoint when it puts a logged
// block home, ordered when a later commit's block bitmap shows it newly
// allocated, other when two commits pass without that, journal when it is
// the internal journal's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "server/lab/filesystem.h"
#include "server/probe/ext4_layout.h"
#include "server/probe/traffic_classifier.h"
#include "server/store/memory_store.h"

namespace traffic_classifier_test {

using nvj::Traffic;
using nvj::TrafficClassifier;

namespace {

std::size_t at(Traffic t) { return static_cast<std::size_t>(t); }

struct Formatted {
  nvj::MemoryStore data{64 << 20};
  nvj::MemoryStore journal{8 << 20};
  std::optional<nvj::Ext4Layout> layout;
  Formatted() {
    nvj::FilesystemSpec spec;
    spec.block_size = 4096;
    nvj::prepare_filesystem(spec, data, &journal);
    layout = nvj::Ext4Layout::read(data);
  }
  std::vector<std::uint8_t> home_bitmap(std::uint32_t group) {
    std::vector<std::uint8_t> b(4096);
    data.read(b.data(), 4096, layout->bitmap_block_offset(group));
    return b;
  }
  // The first run of `n` blocks free at home in group 0 that starts at or after `from`.
  std::uint64_t free_run(std::uint32_t n, std::uint64_t from) {
    const auto bitmap = home_bitmap(0);
    std::uint32_t length = 0;
    for (std::uint32_t bit = static_cast<std::uint32_t>(from); bit < layout->blocks_in_group(0); ++bit) {
      length = ((static_cast<unsigned>(bitmap[bit / 8]) >> (bit % 8)) & 1u) != 0 ? 0 : length + 1;
      if (length == n) return layout->group_first_block(0) + bit + 1 - n;
    }
    FAIL("no free run");
    return 0;
  }
};

void set_bits(std::vector<std::uint8_t>& bitmap, std::uint64_t first, std::uint64_t n) {
  for (std::uint64_t b = first; b < first + n; ++b) bitmap[b / 8] |= static_cast<std::uint8_t>(1u << (b % 8));
}

}  // namespace

TEST_CASE("traffic classifier: allocated writes before the commit are ordered, the rest other after two commits",
          "[probe][traffic]") {
  Formatted fs;
  REQUIRE(fs.layout);
  const std::uint32_t bs = fs.layout->block_size();
  const std::uint64_t bitmap_block = fs.layout->bitmap_block_offset(0) / bs;
  REQUIRE(fs.layout->bitmap_group(bitmap_block) == 0u);
  REQUIRE(fs.layout->group_first_block(0) == 0);

  // A run of 70 blocks starting 60 bits into a 64-bit word: it crosses two
  // word boundaries of the bitmap.
  const std::uint64_t run = fs.free_run(200, 0);
  const std::uint64_t start = (run + 63) / 64 * 64 + 60;  // at most run + 123: the 70 fit in the 200
  const std::uint64_t unrelated = fs.free_run(4, start + 70 + 8);

  TrafficClassifier c(&*fs.layout, &fs.data, bs);
  c.data_write(start * bs, 2 * bs, 200);           // first two blocks of the run, one write
  c.data_write((start + 69) * bs, bs, 100);         // its last block
  c.data_write((start + 70) * bs, bs, 50);          // just past it: not allocated
  c.data_write(unrelated * bs, 3 * bs, 70);         // free at home and in the logged bitmap
  auto logged = fs.home_bitmap(0);
  set_bits(logged, start, 70);
  c.logged(bitmap_block, logged);
  c.committed(7);

  auto t = c.totals();
  CHECK(t.bytes[at(Traffic::ordered)] == 3 * bs);
  CHECK(t.writes[at(Traffic::ordered)] == 2);
  CHECK(t.device_time[at(Traffic::ordered)] == 300);
  // Pending writes count as other until they are decided.
  CHECK(t.bytes[at(Traffic::other)] == 4 * bs);
  CHECK(t.writes[at(Traffic::other)] == 2);

  c.committed(8);  // the second commit without allocating them: other for good
  t = c.totals();
  CHECK(t.bytes[at(Traffic::other)] == 4 * bs);
  CHECK(t.device_time[at(Traffic::other)] == 120);
  CHECK(t.bytes[at(Traffic::ordered)] == 3 * bs);
  CHECK(t.bytes[at(Traffic::checkpoint)] == 0);
}

TEST_CASE("traffic classifier: a committed logged block written home is a checkpoint, once", "[probe][traffic]") {
  Formatted fs;
  REQUIRE(fs.layout);
  const std::uint32_t bs = fs.layout->block_size();
  TrafficClassifier c(&*fs.layout, &fs.data, bs);
  const std::vector<std::uint8_t> content(bs, 0xAB);
  const std::uint64_t inode_table_block = 1000;  // any target: the classifier keys on the block number
  c.logged(inode_table_block, content);
  c.data_write(inode_table_block * bs, bs, 10);  // before its commit: not a checkpoint
  c.committed(3);
  c.data_write(inode_table_block * bs, 2 * bs, 40);  // home, with the next block in the same write
  c.data_write(inode_table_block * bs, bs, 10);      // again: no longer awaited
  c.journal_write(8192, 5);

  c.committed(4);
  c.committed(5);
  const auto t = c.totals();
  CHECK(t.bytes[at(Traffic::checkpoint)] == bs);
  CHECK(t.writes[at(Traffic::checkpoint)] == 1);
  CHECK(t.device_time[at(Traffic::checkpoint)] == 20);  // half the write's time: one block of two
  CHECK(t.bytes[at(Traffic::other)] == bs + bs + bs);
  CHECK(t.device_time[at(Traffic::other)] == 10 + 20 + 10);
  CHECK(t.bytes[at(Traffic::journal)] == 8192);
  CHECK(t.writes[at(Traffic::journal)] == 1);
}

TEST_CASE("traffic classifier: the tail moving past a transaction stops awaiting its blocks", "[probe][traffic]") {
  TrafficClassifier c(nullptr, nullptr, 4096);  // no layout: nothing can be ordered
  c.logged(500, std::vector<std::uint8_t>(4096));
  c.committed(10);
  c.logged(600, std::vector<std::uint8_t>(4096));
  c.committed(11);
  c.tail_moved(11);  // transaction 10 is home: its block no longer awaited
  c.data_write(500 * 4096, 4096, 1);
  c.data_write(600 * 4096, 4096, 1);
  c.committed(12);
  c.committed(13);
  const auto t = c.totals();
  CHECK(t.bytes[at(Traffic::checkpoint)] == 4096);
  CHECK(t.bytes[at(Traffic::other)] == 4096);
  CHECK(t.bytes[at(Traffic::ordered)] == 0);
}

}  // namespace traffic_classifier_test
