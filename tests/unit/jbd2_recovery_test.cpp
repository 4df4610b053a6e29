// SPDX-License-Identifier: BSD-3-Clause
// Recovery's three passes against logs laid out by LogBuilder: what is
// written home, what revokes and checksums keep out, where the log ends.
#include <catch2/catch.hpp>
#include <algorithm>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_recovery.h"
#include "tests/support/jbd2_log_builder.h"
#include "tests/support/sparse_image.h"

namespace jbd2_recovery_test {

namespace {

using namespace fscore::jbd2;

constexpr std::uint32_t kBs = 1024;
constexpr std::uint32_t kLen = 64;

JournalSuperblock crashed_super(std::uint32_t start, std::uint32_t sequence) {
  JournalSuperblock sb;
  sb.block_size = kBs;
  sb.maxlen = kLen;
  sb.first = 1;
  sb.start = start;
  sb.sequence = sequence;
  sb.feature_incompat = feature::kIncompatRevoke | feature::kIncompatCsumV3 | feature::kIncompat64bit;
  sb.checksum_type = 4;
  sb.uuid[0] = 7;
  return sb;
}

std::vector<std::uint8_t> filled(std::uint8_t byte) { return std::vector<std::uint8_t>(kBs, byte); }

struct Journal {
  JournalSuperblock sb;
  nvj::test::SparseImage image{std::uint64_t{kLen} * kBs};
  nvj::test::SparseImage fs{std::uint64_t{1000} * kBs, kBs};
  void put(std::vector<LogBlockWrite>& blocks) {
    for (const auto& w : blocks) image.write(std::uint64_t{w.log_block} * kBs, w.bytes);
    blocks.clear();
  }
  std::uint8_t home(std::uint64_t block) const {
    std::uint8_t b[1];
    fs.read(block * kBs + 5, b);
    return b[0];
  }
};

}  // namespace

TEST_CASE("jbd2 recovery: revokes, escapes, the last copy wins, an uncommitted tail is left", "[jbd2]") {
  const std::uint32_t start = GENERATE(1u, 55u);  // 55: the log wraps
  Journal j{crashed_super(start, 40)};
  LogBuilder log(j.sb, start, 40);
  log.log(100, filled(1));
  log.log(101, filled(1));
  auto magic = filled(3);
  fscore::store_be<std::uint32_t>(magic.data(), kMagic);
  log.log(102, magic);
  log.commit(10, 0);
  log.log(100, filled(2));
  log.revoke(101);
  log.commit(11, 0);
  log.log(103, filled(4));
  log.abandon();  // its commit never reached the disk
  j.put(log.blocks());
  const JournalLog jl(j.image, kBs, kLen, {});
  const JournalScan scan = scan_journal(jl, j.sb);
  REQUIRE(scan.error == 0);
  CHECK(scan.start_tid == 40);
  CHECK(scan.end_tid == 42);
  REQUIRE(scan.transactions.size() == 3);
  CHECK(scan.transactions[0].replayed);
  CHECK(scan.transactions[1].revoked == 1);
  CHECK_FALSE(scan.transactions[2].replayed);
  CHECK_FALSE(scan.transactions[2].commit_log_block);

  const ReplayResult r = replay_journal(jl, j.sb, scan, j.fs, 1000);
  CHECK(r.error == 0);
  CHECK(r.next_tid == 43);
  CHECK(r.replayed == 3);  // 100 twice, 102; 101 revoked by a later transaction
  CHECK(r.revoke_hits == 1);
  CHECK(j.home(100) == 2);
  CHECK_FALSE(j.fs.holds(101 * kBs, kBs));
  std::uint8_t head[4];
  j.fs.read(102 * kBs, head);
  CHECK(fscore::load_be<std::uint32_t>(head) == kMagic);  // the escape undone
  CHECK_FALSE(j.fs.holds(103 * kBs, kBs));
}

TEST_CASE("jbd2 recovery: a corrupt commit ends the log, a corrupt block is skipped", "[jbd2]") {
  Journal j{crashed_super(1, 5)};
  LogBuilder log(j.sb, 1, 5);
  log.log(10, filled(1));
  log.commit(1, 0);
  log.log(11, filled(2));
  log.log(12, filled(2));
  log.commit(2, 0);
  log.log(13, filled(3));
  log.commit(3, 0);
  auto& blocks = log.blocks();
  SECTION("a bad commit checksum: later transactions are not replayed") {
    blocks[6].bytes[100] ^= 1;  // transaction 6's commit block
    j.put(blocks);
    const JournalLog jl(j.image, kBs, kLen, {});
    const JournalScan scan = scan_journal(jl, j.sb);
    CHECK(scan.failed_commit == 6u);
    CHECK(scan.end_tid == 6);
    const ReplayResult r = replay_journal(jl, j.sb, scan, j.fs, 1000);
    CHECK(r.error == 0);
    CHECK(j.home(10) == 1);
    CHECK_FALSE(j.fs.holds(11 * kBs, kBs));
  }
  SECTION("a commit block whose first sector landed: corrupt to e2fsck and 6.1, complete to 6.11 and later") {
    // The power went after the commit block's first 512 bytes: the rest
    // holds what the journal held there before (not the zeros written).
    std::fill(blocks[6].bytes.begin() + 512, blocks[6].bytes.end(), std::uint8_t{0x5a});
    j.put(blocks);
    const JournalLog jl(j.image, kBs, kLen, {});
    const JournalScan old = scan_journal(jl, j.sb);
    CHECK(old.failed_commit == 6u);
    CHECK(old.end_tid == 6);
    CHECK(old.transactions[1].bad_commit_checksum);
    const JournalScan scan = scan_journal(jl, j.sb, nullptr, recovery_rules_of("6.12.118+deb13-amd64"));
    CHECK_FALSE(scan.failed_commit);
    CHECK(scan.end_tid == 8);
    CHECK(scan.transactions[1].partial_commit);
    CHECK_FALSE(scan.transactions[1].bad_commit_checksum);
    const ReplayResult r = replay_journal(jl, j.sb, scan, j.fs, 1000);
    CHECK(r.error == 0);
    CHECK(j.home(11) == 2);
    CHECK(j.home(13) == 3);
  }
  SECTION("a commit block whose header is damaged is corrupt by either rules") {
    blocks[6].bytes[50] ^= 1;  // in the commit header (h_commit_sec)
    j.put(blocks);
    const JournalLog jl(j.image, kBs, kLen, {});
    CHECK(scan_journal(jl, j.sb, nullptr, recovery_rules_of("7.3-rc7")).failed_commit == 6u);
  }
  SECTION("a bad logged block: skipped, the rest replayed, recovery reports the error") {
    blocks[4].bytes[100] ^= 1;  // block 11's logged copy
    j.put(blocks);
    const JournalLog jl(j.image, kBs, kLen, {});
    const JournalScan scan = scan_journal(jl, j.sb);
    CHECK(scan.transactions[1].bad_block_checksums == 1);
    const ReplayResult r = replay_journal(jl, j.sb, scan, j.fs, 1000);
    CHECK(r.error == kErrBadCrc);
    CHECK(r.bad_checksums == 1);
    CHECK_FALSE(j.fs.holds(11 * kBs, kBs));
    CHECK(j.home(12) == 2);
    CHECK(j.home(13) == 3);
  }
  SECTION("a bad descriptor checksum with a newer commit: recovery refuses to replay anything") {
    blocks[3].bytes[100] ^= 1;  // transaction 6's descriptor
    j.put(blocks);
    const JournalLog jl(j.image, kBs, kLen, {});
    const JournalScan scan = scan_journal(jl, j.sb);
    CHECK(scan.error == kErrBadCrc);
    const ReplayResult r = replay_journal(jl, j.sb, scan, j.fs, 1000);
    CHECK(r.error == kErrBadCrc);
    CHECK(r.replayed == 0);
  }
}

TEST_CASE("jbd2 recovery: a clean journal, and targets past the filesystem", "[jbd2]") {
  Journal j{crashed_super(0, 9)};
  const JournalLog jl(j.image, kBs, kLen, {});
  const JournalScan clean = scan_journal(jl, j.sb);
  CHECK_FALSE(clean.needs_recovery);
  CHECK(replay_journal(jl, j.sb, clean, j.fs, 1000).next_tid == 10);

  Journal far{crashed_super(1, 1)};
  LogBuilder log(far.sb, 1, 1);
  log.log(5000, filled(1));
  log.commit(1, 0);
  far.put(log.blocks());
  const JournalLog fl(far.image, kBs, kLen, {});
  const ReplayResult r = replay_journal(fl, far.sb, scan_journal(fl, far.sb), far.fs, 1000);
  CHECK(r.error == kErrCorrupted);
  CHECK(r.replayed == 0);
}

TEST_CASE("jbd2 recovery: the rules of a kernel release", "[jbd2]") {
  CHECK_FALSE(recovery_rules_of("6.1.0-56-amd64").partial_commit_blocks);
  CHECK_FALSE(recovery_rules_of("6.10.14").partial_commit_blocks);
  CHECK(recovery_rules_of("6.11").partial_commit_blocks);
  CHECK(recovery_rules_of("6.12.118+deb13-amd64").partial_commit_blocks);
  CHECK(recovery_rules_of("7.3-rc7").partial_commit_blocks);
  CHECK(recovery_rules_of("10.0.1").partial_commit_blocks);
  CHECK_FALSE(recovery_rules_of("5.19.17").partial_commit_blocks);
  CHECK_FALSE(recovery_rules_of("").partial_commit_blocks);
  CHECK_FALSE(recovery_rules_of("linux").partial_commit_blocks);
  CHECK_FALSE(recovery_rules_of("6").partial_commit_blocks);
}

}  // namespace jbd2_recovery_test
