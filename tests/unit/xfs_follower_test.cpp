// SPDX-License-Identifier: BSD-3-Clause
// The live XFS log follower (fscore/xfs/log_follower.h) over a small log
// ring in memory: records whole in one write, split and out of order, one
// that wraps past the end of the log, a damaged one, one never finished;
// durability by FUA and by flush; and, over random logs written in random
// pieces, the same records, head and tail as the offline scan of what the
// writes left. tests/integration/xfs_live_test.sh checks it against the
// kernel's own figures.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fscore/xfs/log_follower.h"
#include "fscore/xfs/log_scan.h"
#include "tests/support/xfs_record_builder.h"

namespace xfs_follower_test {

using namespace fscore::xfs;

namespace {

using Bytes = std::vector<std::uint8_t>;

class BufferSource final : public fscore::BlockSource {
 public:
  explicit BufferSource(const Bytes& bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  void read(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  }

 private:
  const Bytes& bytes_;
};

struct Seen final : FollowerEvents {
  std::vector<FollowedRecord> records, durable;
  std::vector<std::string> problems;
  void on_record(const FollowedRecord& r) override { records.push_back(r); }
  void on_durable(const FollowedRecord& r) override { durable.push_back(r); }
  void on_problem(const std::string& p) override { problems.push_back(p); }
};

Bytes payload(std::size_t n, std::uint8_t seed) {
  Bytes d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<std::uint8_t>(seed + i * 7);
  return d;
}

// A log of `blocks` basic blocks and the follower watching it; `put` stores
// bytes as a device would and then tells the follower.
struct Lab {
  explicit Lab(std::uint64_t blocks) : log(blocks * kBasicBlock, 0), source(log), follower(source, blocks, seen) {}
  void put(std::uint64_t block, std::span<const std::uint8_t> bytes, bool fua, Nanos arrived, Nanos completed) {
    std::copy(bytes.begin(), bytes.end(), log.begin() + static_cast<std::ptrdiff_t>(block * kBasicBlock));
    follower.write({block * kBasicBlock, std::span(log).subspan(block * kBasicBlock, bytes.size()), fua, arrived,
                    completed});
  }
  Bytes log;
  BufferSource source;
  Seen seen;
  LogFollower follower;
};

}  // namespace

TEST_CASE("xfs follower: whole records, FUA, head and tail", "[xfs]") {
  Lab lab(256);
  const Bytes a = build_record({.cycle = 1, .block = 0, .tail = {1, 0}, .operations = 3}, payload(2000, 1));
  const Bytes b = build_record({.cycle = 1, .block = 5, .tail = {1, 0}, .operations = 9}, payload(9000, 2));
  REQUIRE(a.size() == 5 * kBasicBlock);
  lab.put(0, a, true, 100, 150);
  lab.put(5, b, true, 200, 290);
  REQUIRE(lab.seen.records.size() == 2);
  CHECK(lab.seen.records[0].crc == CrcCheck::ok);
  CHECK(lab.seen.records[1].crc == CrcCheck::ok);
  CHECK(lab.seen.records[1].header.operations == 9);
  REQUIRE(lab.seen.durable.size() == 2);
  CHECK(lab.seen.durable[0].latency() == 50);
  CHECK(lab.seen.durable[1].latency() == 90);
  CHECK(lab.follower.synchronized());
  CHECK(lab.follower.head() == Lsn{1, 5 + 1 + 18});
  CHECK(lab.follower.tail() == Lsn{1, 0});
  CHECK(lab.follower.fill() == Approx(24.0 / 256));
  const auto& t = lab.follower.totals();
  CHECK(t.records == 2);
  CHECK(t.operations == 12);
  CHECK(t.record_bytes == (5 + 19) * kBasicBlock);
  CHECK(t.crc_ok == 2);
  CHECK(t.log_writes == 2);
  CHECK(lab.seen.problems.empty());
}

TEST_CASE("xfs follower: a record without FUA is durable at the next flush after it", "[xfs]") {
  Lab lab(256);
  const Bytes a = build_record({.cycle = 1, .block = 0, .tail = {1, 0}}, payload(1024, 1));
  lab.follower.flush(10, 20);  // before it: does not count
  lab.put(0, a, false, 100, 150);
  REQUIRE(lab.seen.records.size() == 1);
  CHECK(lab.seen.durable.empty());
  lab.follower.flush(140, 400);  // arrived before the write was acknowledged
  CHECK(lab.seen.durable.empty());
  lab.follower.flush(160, 500);
  REQUIRE(lab.seen.durable.size() == 1);
  CHECK(lab.seen.durable[0].durable == 500);
  CHECK(lab.seen.durable[0].latency() == 400);
  CHECK(lab.follower.totals().flushes == 3);
}

TEST_CASE("xfs follower: a record in pieces, out of order", "[xfs]") {
  Lab lab(512);
  const Bytes r = build_record({.cycle = 1, .block = 40, .tail = {1, 0}, .size = 256 * 1024}, payload(100000, 3));
  const std::size_t half = 100 * kBasicBlock;
  // Its second half first: nothing yet, the header has not been seen.
  lab.put(40 + 100, std::span(r).subspan(half), false, 300, 310);
  CHECK(lab.seen.records.empty());
  lab.put(40, std::span(r).subspan(0, half), false, 320, 330);
  REQUIRE(lab.seen.records.size() == 1);
  CHECK(lab.seen.records[0].crc == CrcCheck::ok);
  CHECK(lab.seen.records[0].header.size == 256 * 1024);
  CHECK(lab.follower.head() == Lsn{1, static_cast<std::uint32_t>(40 + r.size() / kBasicBlock)});

  // The header first, then the rest in two writes: whole after the last.
  const std::uint32_t next = 40 + static_cast<std::uint32_t>(r.size() / kBasicBlock);
  const Bytes s = build_record({.cycle = 1, .block = next, .tail = {1, 40}, .size = 64 * 1024}, payload(20000, 4));
  lab.put(next, std::span(s).subspan(0, 2 * kBasicBlock), true, 400, 410);
  lab.put(next + 20, std::span(s).subspan(20 * kBasicBlock), true, 420, 430);
  CHECK(lab.seen.records.size() == 1);
  lab.put(next + 2, std::span(s).subspan(2 * kBasicBlock, 18 * kBasicBlock), true, 440, 450);
  REQUIRE(lab.seen.records.size() == 2);
  CHECK(lab.seen.records[1].writes == 3);
  CHECK(lab.seen.records[1].crc == CrcCheck::ok);
  REQUIRE(lab.seen.durable.size() == 1);  // every piece FUA: durable with its last
  CHECK(lab.seen.durable[0].latency() == 450 - 400);
  CHECK(lab.follower.tail() == Lsn{1, 40});
}

TEST_CASE("xfs follower: a record that wraps past the end of the log", "[xfs]") {
  constexpr std::uint64_t kBlocks = 64;
  Lab lab(kBlocks);
  const Bytes r = build_record({.cycle = 3, .block = 60, .tail = {3, 10}}, payload(5000, 5), kBlocks);
  const std::size_t first_part = 4 * kBasicBlock;  // blocks 60-63; the rest at 0
  lab.put(60, std::span(r).subspan(0, first_part), false, 10, 20);
  CHECK(lab.seen.records.empty());
  lab.put(0, std::span(r).subspan(first_part), false, 30, 40);
  REQUIRE(lab.seen.records.size() == 1);
  CHECK(lab.seen.records[0].crc == CrcCheck::ok);
  CHECK(lab.follower.head() == Lsn{4, static_cast<std::uint32_t>(r.size() / kBasicBlock - 4)});
  CHECK(lab.follower.tail() == Lsn{3, 10});
  CHECK(lab.follower.fill() == Approx((64.0 - 10 + 7) / 64));  // 3:10 to 4:7
  CHECK(lab.seen.problems.empty());
}

TEST_CASE("xfs follower: a damaged record and one never finished are problems", "[xfs]") {
  Lab lab(256);
  const Bytes a = build_record({.cycle = 1, .block = 0, .tail = {1, 0}}, payload(3000, 6));
  lab.put(0, a, true, 1, 2);
  Bytes b = build_record({.cycle = 1, .block = 7, .tail = {1, 0}}, payload(3000, 7));
  b[kBasicBlock + 100] ^= 0x5A;
  lab.put(7, b, true, 3, 4);
  REQUIRE(lab.seen.records.size() == 2);
  CHECK(lab.seen.records[1].crc == CrcCheck::bad);
  CHECK(lab.follower.head() == Lsn{1, 7});  // the damaged record is not the newest
  REQUIRE(lab.seen.problems.size() == 1);
  CHECK(lab.seen.problems[0] == "the record at 1:7 does not match its CRC");

  // A header whose data never comes, then a record written over it.
  const Bytes c = build_record({.cycle = 1, .block = 20, .tail = {1, 0}}, payload(8000, 8));
  lab.put(20, std::span(c).subspan(0, kBasicBlock), false, 5, 6);
  const Bytes d = build_record({.cycle = 1, .block = 22, .tail = {1, 0}}, payload(600, 9));
  lab.put(22, d, true, 7, 8);
  REQUIRE(lab.seen.problems.size() == 2);
  CHECK(lab.seen.problems[1].find("the record at 1:20 was never written whole") == 0);
  CHECK(lab.follower.head() == Lsn{1, 22 + 3});
  CHECK(lab.follower.totals().problems == 2);
}

TEST_CASE("xfs follower: random logs in random pieces agree with the offline scan", "[xfs]") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 40; ++round) {
    const std::uint64_t blocks = 300 + rng() % 700;
    Lab lab(blocks);
    std::uint32_t cycle = 1, block = 0, count = 0;
    const int records = 5 + static_cast<int>(rng() % 60);
    Nanos now = 0;
    for (int i = 0; i < records; ++i) {
      const std::uint32_t size = (rng() % 2 == 0 ? 32u : 64u) * 1024;
      const Bytes data = payload(1 + rng() % (size - 512), static_cast<std::uint8_t>(i));
      const Bytes r = build_record({.cycle = cycle, .block = block, .tail = {cycle, 0}, .operations = static_cast<std::uint32_t>(1 + rng() % 50),
                                    .size = size},
                                   data, blocks);
      const std::uint64_t n = r.size() / kBasicBlock;
      // Cut where the log ends and at random places; write the pieces in a
      // random order.
      std::vector<std::uint64_t> cuts{0, n};
      if (block + n > blocks) cuts.push_back(blocks - block);
      for (int k = 0, extra = static_cast<int>(rng() % 4); k < extra; ++k) cuts.push_back(rng() % n);
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) pieces.emplace_back(cuts[k], cuts[k + 1]);
      std::shuffle(pieces.begin(), pieces.end(), rng);
      for (const auto& [from, to] : pieces) {
        now += 10;
        lab.put((block + from) % blocks, std::span(r).subspan(from * kBasicBlock, (to - from) * kBasicBlock), true,
                now, now + 5);
      }
      ++count;
      block += static_cast<std::uint32_t>(n);
      if (block >= blocks) {
        block -= static_cast<std::uint32_t>(blocks);
        ++cycle;
      }
    }
    INFO("round " << round << ", " << blocks << " blocks, " << records << " records");
    CHECK(lab.seen.problems.empty());
    CHECK(lab.follower.totals().records == count);
    CHECK(lab.follower.totals().crc_ok == count);
    const LogScan scan = scan_log(lab.source, blocks * kBasicBlock);
    REQUIRE(scan.newest.has_value());
    CHECK(lab.follower.head() == scan.head);
    CHECK(lab.follower.tail() == scan.tail);
    CHECK(lab.follower.head() == Lsn{cycle, block});
  }
}

}  // namespace xfs_follower_test
