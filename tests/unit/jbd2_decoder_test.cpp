// SPDX-License-Identifier: BSD-3-Clause
// JournalDecoder against logs laid out by LogBuilder (the kernel's layout),
// delivered in order, out of order, wrapped, corrupted and as garbage.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_decoder.h"
#include "tests/support/jbd2_log_builder.h"
#include "tests/support/sparse_image.h"

namespace jbd2_decoder_test {

namespace {

using namespace fscore::jbd2;

struct Recorder : DecoderEvents {
  std::vector<Transaction> commits;
  std::vector<LoggedBlock> logged;
  std::vector<std::vector<std::uint8_t>> logged_content;
  std::vector<std::uint64_t> revoked;
  std::vector<SuperblockUpdate> superblocks;
  std::vector<ProblemReport> problems;
  std::size_t fast_commits = 0;
  void on_superblock(const SuperblockUpdate& u) override { superblocks.push_back(u); }
  void on_logged_block(const LoggedBlock& b) override {
    logged.push_back(b);
    logged_content.emplace_back(b.content.begin(), b.content.end());
  }
  void on_revoke(std::uint32_t, std::uint32_t, std::span<const std::uint64_t> r) override {
    revoked.insert(revoked.end(), r.begin(), r.end());
  }
  void on_commit(const Transaction& t) override { commits.push_back(t); }
  void on_fast_commit(std::uint32_t) override { ++fast_commits; }
  void on_problem(const ProblemReport& p) override { problems.push_back(p); }
  std::size_t count(Problem p) const {
    return static_cast<std::size_t>(std::count_if(problems.begin(), problems.end(),
                                                  [&](const ProblemReport& r) { return r.problem == p; }));
  }
};

JournalSuperblock make_super(std::uint32_t block_size, std::uint32_t maxlen, std::uint32_t incompat,
                             std::uint32_t compat = 0) {
  JournalSuperblock sb;
  sb.block_size = block_size;
  sb.maxlen = maxlen;
  sb.first = 1;
  sb.sequence = 1;
  sb.start = 0;
  sb.feature_compat = compat;
  sb.feature_incompat = incompat;
  if (sb.has_csum_v2_or_v3()) sb.checksum_type = 4;
  for (std::size_t i = 0; i < 16; ++i) sb.uuid[i] = static_cast<std::uint8_t>(0x10 + i);
  sb.nr_users = 1;
  return sb;
}

std::vector<std::uint8_t> block_of(std::uint32_t size, std::uint32_t seed) {
  std::vector<std::uint8_t> b(size);
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// A journal in memory and a decoder over it; time advances by 1 us a write.
struct Lab {
  JournalSuperblock sb;
  nvj::test::SparseImage image;
  Recorder events;
  JournalDecoder decoder;
  Nanos now = 1000;

  explicit Lab(const JournalSuperblock& s)
      : sb(s), image(std::uint64_t{s.maxlen} * s.block_size), decoder(store_super(), events, {0}) {}

  nvj::test::SparseImage& store_super() {
    write_super_bytes();
    return image;
  }
  void write_super_bytes() {
    std::uint8_t raw[kSuperblockSize];
    encode_journal_superblock(sb, raw);
    image.write(0, raw);
  }
  // What a mount's first commit does: the superblock with the log's start.
  void superblock(std::uint32_t start, std::uint32_t sequence, bool fua = true) {
    sb.start = start;
    sb.sequence = sequence;
    write_super_bytes();
    std::vector<std::uint8_t> whole(sb.block_size);
    image.read(0, whole);
    deliver(0, whole, fua);
  }
  void deliver(std::uint64_t offset, std::span<const std::uint8_t> bytes, bool fua = false) {
    image.write(offset, bytes);
    now += 1000;
    decoder.write(LogWrite{offset, bytes, fua, now, now + 500});
  }
  void deliver(const LogBlockWrite& w, bool fua = false) {
    deliver(std::uint64_t{w.log_block} * sb.block_size, w.bytes, fua);
  }
  void deliver_all(std::vector<LogBlockWrite>& blocks) {
    for (const auto& w : blocks) deliver(w);
    blocks.clear();
  }
};

}  // namespace

TEST_CASE("jbd2 decoder: transactions in order, every tag format", "[jbd2]") {
  const auto [incompat, compat] = GENERATE(table<std::uint32_t, std::uint32_t>({
      {0, 0},
      {feature::kIncompat64bit, 0},
      {feature::kIncompatRevoke | feature::kIncompatCsumV2, 0},
      {feature::kIncompatRevoke | feature::kIncompatCsumV2 | feature::kIncompat64bit, 0},
      {feature::kIncompatRevoke | feature::kIncompatCsumV3, 0},
      {feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompat64bit, 0},
      {feature::kIncompatRevoke, feature::kCompatChecksum},
  }));
  const std::uint32_t bs = GENERATE(1024u, 4096u);
  CAPTURE(incompat, compat, bs);
  Lab lab(make_super(bs, 1024, incompat, compat));
  REQUIRE(lab.decoder.has_format());
  lab.superblock(1, 7);
  LogBuilder log(lab.sb, 1, 7);
  // Transaction 7: 3 blocks, one beginning with the magic (escaped).
  auto magic = block_of(bs, 1);
  fscore::store_be<std::uint32_t>(magic.data(), kMagic);
  log.log(1000, block_of(bs, 2));
  log.log(0x1'0000'0001ull & ((incompat & feature::kIncompat64bit) ? ~0ull : 0xFFFF'FFFFull), magic);
  log.log(1002, block_of(bs, 3));
  log.commit(1700000000, 42);
  // Transaction 8: revokes and more blocks than fit in one descriptor.
  log.revoke(1000);
  log.revoke(5555);
  const std::size_t many = log.tags_per_descriptor() + 3;
  for (std::size_t i = 0; i < many; ++i) log.log(2000 + i, block_of(bs, static_cast<std::uint32_t>(100 + i)));
  log.commit(1700000001, 0);
  // Transaction 9: a commit block alone.
  log.commit(1700000002, 0);
  lab.deliver_all(log.blocks());

  const auto& ev = lab.events;
  REQUIRE(ev.problems.empty());
  REQUIRE(ev.commits.size() == 3);
  CHECK(ev.commits[0].tid == 7);
  CHECK(ev.commits[0].logged_blocks == 3);
  CHECK(ev.commits[0].descriptor_blocks == 1);
  CHECK(ev.commits[0].escaped_blocks == 1);
  CHECK(ev.commits[0].log_blocks == 5);
  CHECK(ev.commits[0].commit_seconds == 1700000000);
  CHECK(ev.commits[0].commit_nanoseconds == 42);
  CHECK(ev.commits[0].first_log_block == 1);
  CHECK(ev.commits[0].duration() == 4 * 1000 + 500);  // first write's arrival to the commit's acknowledgement
  CHECK(ev.commits[1].tid == 8);
  CHECK(ev.commits[1].logged_blocks == many);
  CHECK(ev.commits[1].descriptor_blocks == 2);
  CHECK(ev.commits[1].revoke_blocks == 1);
  CHECK(ev.commits[1].revoked == 2);
  CHECK(ev.commits[2].tid == 9);
  CHECK(ev.commits[2].log_blocks == 1);
  CHECK(ev.revoked == std::vector<std::uint64_t>{1000, 5555});
  REQUIRE(ev.logged.size() == 3 + many);
  CHECK(ev.logged[0].target == 1000);
  CHECK(ev.logged[1].escaped);
  CHECK(ev.logged_content[1][0] == 0);  // as logged: the magic is zeroed
  CHECK(std::equal(ev.logged_content[2].begin(), ev.logged_content[2].end(), block_of(bs, 3).begin()));
  for (const auto& b : ev.logged) CHECK(b.checksum_ok);
  const DecoderTotals t = lab.decoder.totals(lab.now);
  CHECK(t.transactions == 3);
  CHECK(t.logged_blocks == 3 + many);
  CHECK(t.revoked == 2);
  CHECK(t.escaped_blocks == 1);
  CHECK(t.log_blocks == 5 + 1 + 2 + many + 1 + 1);
  CHECK(t.log_bytes == t.log_blocks * bs);
  CHECK(lab.decoder.next_tid() == 10);
  CHECK(lab.decoder.head() == log.head());
}

TEST_CASE("jbd2 decoder: blocks that arrive out of order are decoded in log order", "[jbd2]") {
  Lab lab(make_super(4096, 512, feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompat64bit));
  LogBuilder log(lab.sb, 1, 100);
  for (int t = 0; t < 20; ++t) {
    for (int i = 0; i < 1 + t % 5; ++i) log.log(static_cast<std::uint64_t>(5000 + t * 10 + i), block_of(4096, static_cast<std::uint32_t>(t * 10 + i)));
    if (t % 3 == 0) log.revoke(static_cast<std::uint64_t>(7000 + t));
    log.commit(1, 0);
  }
  auto blocks = log.blocks();
  // Shuffle within windows of 8 writes, as requests in flight may land.
  std::mt19937 rng(5);
  for (std::size_t i = 0; i < blocks.size(); i += 8)
    std::shuffle(blocks.begin() + static_cast<std::ptrdiff_t>(i),
                 blocks.begin() + static_cast<std::ptrdiff_t>(std::min(blocks.size(), i + 8)), rng);
  // The superblock update arrives after some of the log, too.
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (i == 3) lab.superblock(1, 100);
    lab.deliver(blocks[i]);
  }
  REQUIRE(lab.events.problems.empty());
  REQUIRE(lab.events.commits.size() == 20);
  for (std::size_t t = 0; t < 20; ++t) {
    CHECK(lab.events.commits[t].tid == 100 + t);
    CHECK(lab.events.commits[t].logged_blocks == 1 + t % 5);
  }
  CHECK(lab.events.revoked.size() == 7);
}

TEST_CASE("jbd2 decoder: the log wraps and the tail follows the superblock", "[jbd2]") {
  Lab lab(make_super(1024, 64, feature::kIncompatRevoke | feature::kIncompatCsumV3));
  lab.superblock(1, 1);
  LogBuilder log(lab.sb, 1, 1);
  std::size_t expected_logged = 0;
  for (int t = 0; t < 60; ++t) {
    const int n = 1 + t % 7;
    for (int i = 0; i < n; ++i) log.log(static_cast<std::uint64_t>(300 + i), block_of(1024, static_cast<std::uint32_t>(t + i)));
    expected_logged += static_cast<std::size_t>(n);
    log.commit(0, 0);
    lab.deliver_all(log.blocks());
    // Checkpointed at once: the tail moves to the head.
    lab.superblock(log.head(), log.next_tid(), false);
    CHECK(lab.decoder.fill() == 0.0);
  }
  REQUIRE(lab.events.problems.empty());
  CHECK(lab.events.commits.size() == 60);
  CHECK(lab.decoder.totals(lab.now).logged_blocks == expected_logged);
  CHECK(lab.events.commits.back().tid == 60);
}

TEST_CASE("jbd2 decoder: fill, and the time the log stays full", "[jbd2]") {
  Lab lab(make_super(1024, 101, feature::kIncompatRevoke | feature::kIncompatCsumV3));  // 100 log blocks
  lab.superblock(1, 1);
  LogBuilder log(lab.sb, 1, 1);
  for (int i = 0; i < 78; ++i) log.log(static_cast<std::uint64_t>(500 + i), block_of(1024, 1));
  log.commit(0, 0);  // two descriptors at 1 KiB: 81 of the 100 log blocks
  lab.deliver_all(log.blocks());
  const double fill = lab.decoder.fill();
  CHECK(fill == Approx(static_cast<double>(log.head() - 1) / 100));
  REQUIRE(fill >= JournalDecoder::kFullFill);
  const Nanos full_from = lab.now + 500;
  lab.now += 1'000'000;
  lab.superblock(log.head(), log.next_tid(), false);  // checkpoint done: the tail catches up
  CHECK(lab.decoder.fill() == 0.0);
  const DecoderTotals t = lab.decoder.totals(lab.now);
  CAPTURE(full_from, lab.now, lab.events.commits.size(), lab.events.commits[0].commit_completed, lab.events.commits[0].first_write);
  CHECK(t.full_time == lab.now + 500 - full_from);
  CHECK(t.longest_full == t.full_time);
}

TEST_CASE("jbd2 decoder: a log that resumes at s_head after a clean mount", "[jbd2]") {
  auto sb = make_super(4096, 256, feature::kIncompatRevoke | feature::kIncompatCsumV3);
  sb.head = 200;
  sb.sequence = 50;
  Lab lab(sb);
  lab.superblock(200, 50);
  LogBuilder log(lab.sb, 200, 50);
  for (int t = 0; t < 30; ++t) {
    log.log(static_cast<std::uint64_t>(9000 + t), block_of(4096, static_cast<std::uint32_t>(t)));
    log.commit(0, 0);
  }
  lab.deliver_all(log.blocks());
  REQUIRE(lab.events.problems.empty());
  CHECK(lab.events.commits.size() == 30);
  CHECK(lab.events.commits.front().first_log_block == 200);
  CHECK(lab.decoder.head() < 200);  // wrapped past the end
}

TEST_CASE("jbd2 decoder: async commit writes the commit block before its data", "[jbd2]") {
  Lab lab(make_super(4096, 128, feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompatAsyncCommit));
  lab.superblock(1, 3);
  LogBuilder log(lab.sb, 1, 3);
  log.log(77, block_of(4096, 7));
  log.log(78, block_of(4096, 8));
  log.commit(0, 0);
  auto blocks = log.blocks();
  lab.deliver(blocks[3], true);  // commit first
  CHECK(lab.events.commits.empty());
  lab.deliver(blocks[0]);
  lab.deliver(blocks[2]);
  CHECK(lab.events.commits.empty());
  lab.deliver(blocks[1]);
  REQUIRE(lab.events.commits.size() == 1);
  CHECK(lab.events.commits[0].logged_blocks == 2);
  CHECK(lab.events.problems.empty());
}

TEST_CASE("jbd2 decoder: checksum mismatches are reported and not fatal", "[jbd2]") {
  Lab lab(make_super(4096, 128, feature::kIncompatRevoke | feature::kIncompatCsumV3));
  lab.superblock(1, 1);
  LogBuilder log(lab.sb, 1, 1);
  log.log(10, block_of(4096, 1));
  log.log(11, block_of(4096, 2));
  log.commit(0, 0);
  log.log(12, block_of(4096, 3));
  log.commit(0, 0);
  auto& blocks = log.blocks();
  blocks[2].bytes[100] ^= 1;  // a logged block
  blocks[3].bytes[200] ^= 1;  // the commit block
  lab.deliver_all(blocks);
  CHECK(lab.events.commits.size() == 2);
  CHECK(lab.events.commits[0].checksum_errors == 2);
  CHECK(lab.events.commits[1].checksum_errors == 0);
  CHECK(lab.events.count(Problem::kChecksum) == 2);
  CHECK_FALSE(lab.events.logged[1].checksum_ok);
  CHECK(lab.decoder.totals(lab.now).checksum_errors == 2);
}

TEST_CASE("jbd2 decoder: flushes and FUA writes around a commit", "[jbd2]") {
  Lab lab(make_super(4096, 128, feature::kIncompatRevoke | feature::kIncompatCsumV3));
  lab.superblock(1, 1);
  lab.decoder.flush(lab.now);  // before the transaction: not counted
  LogBuilder log(lab.sb, 1, 1);
  log.log(10, block_of(4096, 1));
  log.commit(0, 0);
  auto blocks = log.blocks();
  lab.deliver(blocks[0]);
  lab.deliver(blocks[1]);
  lab.decoder.flush(lab.now + 10);  // the data disk, before the commit
  lab.decoder.flush(lab.now + 20);  // the commit's preflush
  lab.deliver(blocks[2], true);
  REQUIRE(lab.events.commits.size() == 1);
  CHECK(lab.events.commits[0].flushes == 2);
  CHECK(lab.events.commits[0].fua_writes == 1);
}

TEST_CASE("jbd2 decoder: garbage, stale blocks and lost blocks, then the log is found again", "[jbd2]") {
  Lab lab(make_super(4096, 256, feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompat64bit));
  lab.superblock(1, 1);
  // Garbage where the log continues.
  lab.deliver(4096, block_of(4096, 99));
  CHECK(lab.events.count(Problem::kUnexpected) == 1);
  CHECK_FALSE(lab.decoder.synchronized());
  // The log found again at a descriptor somewhere else.
  LogBuilder log(lab.sb, 40, 9);
  log.log(1, block_of(4096, 1));
  log.commit(0, 0);
  lab.deliver_all(log.blocks());
  CHECK(lab.decoder.synchronized());
  REQUIRE(lab.events.commits.size() == 1);
  CHECK(lab.events.commits[0].tid == 9);
  // A descriptor whose blocks never come while many others are written.
  log.log(2, block_of(4096, 2));
  log.log(3, block_of(4096, 3));
  log.commit(0, 0);
  lab.deliver(log.blocks()[0]);
  log.blocks().clear();
  for (std::uint32_t b = 100; b < 240; ++b) lab.deliver(std::uint64_t{b} * 4096, block_of(4096, b));
  CHECK(lab.events.count(Problem::kStalled) == 1);
  // A later superblock update picks the log up again.
  LogBuilder again(lab.sb, 5, 20);
  again.log(4, block_of(4096, 4));
  again.commit(0, 0);
  lab.superblock(5, 20);
  lab.deliver_all(again.blocks());
  CHECK(lab.events.commits.back().tid == 20);
  // A stale block of an older transaction where the log continues.
  LogBuilder stale(lab.sb, again.head(), 3);
  stale.commit(0, 0);
  lab.deliver_all(stale.blocks());
  CHECK(lab.events.count(Problem::kUnexpected) == 2);
}

TEST_CASE("jbd2 decoder: fast-commit blocks are counted, oversized journals refused", "[jbd2]") {
  auto sb = make_super(4096, 512, feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompatFastCommit);
  sb.num_fc_blocks = 16;
  Lab lab(sb);
  REQUIRE(lab.decoder.format()->last == 496);
  lab.deliver(std::uint64_t{500} * 4096, block_of(4096, 1));
  lab.deliver(std::uint64_t{501} * 4096, block_of(8192, 1));
  CHECK(lab.events.fast_commits == 3);

  auto big = make_super(4096, JournalDecoder::kMaxBlocks + 1, 0);
  nvj::test::SparseImage image(std::uint64_t{big.maxlen} * 4096);
  std::uint8_t raw[kSuperblockSize];
  encode_journal_superblock(big, raw);
  image.write(0, raw);
  Recorder events;
  JournalDecoder decoder(image, events, {0});
  CHECK_FALSE(decoder.has_format());
  CHECK(events.count(Problem::kTooLarge) == 1);
}

TEST_CASE("jbd2 decoder: a journal device, formatted while served", "[jbd2]") {
  // Nothing valid at first: the superblock written later (block 1 at 4 KiB,
  // block 2 at 1 KiB) sets the format.
  for (std::uint32_t bs : {1024u, 4096u}) {
    nvj::test::SparseImage image(std::uint64_t{1024} * bs);
    Recorder events;
    JournalDecoder decoder(image, events, {2048, 4096});
    CHECK_FALSE(decoder.has_format());
    auto sb = make_super(bs, 1024, feature::kIncompatRevoke | feature::kIncompatCsumV3);
    sb.first = 1024 / bs + 2;
    sb.start = sb.first;
    std::vector<std::uint8_t> raw(bs);
    encode_journal_superblock(sb, std::span<std::uint8_t, kSuperblockSize>(raw.data(), kSuperblockSize));
    const std::uint64_t at = std::uint64_t{bs} * (1024 / bs + 1);
    image.write(at, raw);
    decoder.write(LogWrite{at, raw, true, 1, 2});
    REQUIRE(decoder.has_format());
    LogBuilder log(sb, sb.first, 1);
    log.log(123, block_of(bs, 5));
    log.commit(0, 0);
    for (const auto& w : log.blocks()) {
      image.write(std::uint64_t{w.log_block} * bs, w.bytes);
      decoder.write(LogWrite{std::uint64_t{w.log_block} * bs, w.bytes, false, 3, 4});
    }
    CHECK(events.commits.size() == 1);
    CHECK(events.problems.empty());
  }
}

TEST_CASE("jbd2 decoder: a superblock that moves the log's first block starts over", "[jbd2]") {
  Lab lab(make_super(1024, 128, feature::kIncompatRevoke | feature::kIncompatCsumV3));
  lab.superblock(1, 1);
  REQUIRE(lab.decoder.synchronized());
  lab.sb.first = 3;
  lab.superblock(3, 1);  // the same journal, its log now from block 3
  CHECK(lab.decoder.format()->first == 3);
  CHECK(lab.decoder.head() == 3);
  LogBuilder log(lab.sb, 3, 1);
  log.log(10, block_of(1024, 1));
  log.commit(0, 0);
  lab.deliver_all(log.blocks());
  CHECK(lab.events.commits.size() == 1);
  CHECK(lab.events.problems.empty());
}

}  // namespace jbd2_decoder_test
