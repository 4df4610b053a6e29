// SPDX-License-Identifier: BSD-3-Clause
// The jbd2 journal superblock of fscore, encoded and decoded back: every
// field, its users, its checksum, and what decoding refuses.
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_superblock.h"
#include "fscore/uuid.h"

namespace jbd2_superblock_test {

using fscore::Uuid;
using fscore::jbd2::JournalSuperblock;

namespace {

namespace jbd2 = fscore::jbd2;

Uuid uuid_of(std::uint8_t first) {
  Uuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(first + 17 * i);
  return u;
}

JournalSuperblock journal_super_v3() {
  JournalSuperblock sb;
  sb.blocktype = jbd2::kBlocktypeSuperblockV2;
  sb.block_size = 4096;
  sb.maxlen = 262144;
  sb.first = 1;
  sb.sequence = 0x10203040;
  sb.start = 77;
  sb.errno_value = -5;
  sb.feature_compat = 0;
  sb.feature_incompat = jbd2::feature::kIncompatRevoke | jbd2::feature::kIncompat64bit | jbd2::feature::kIncompatCsumV3;
  sb.feature_ro_compat = 0;
  sb.uuid = uuid_of(50);
  sb.max_transaction = 1000;
  sb.max_trans_data = 2000;
  sb.checksum_type = 4;
  sb.num_fc_blocks = 256;
  sb.head = 99;
  sb.users = {uuid_of(60), uuid_of(70), uuid_of(80)};
  sb.nr_users = 3;
  return sb;
}

using JournalBytes = std::array<std::uint8_t, jbd2::kSuperblockSize>;

JournalBytes encode_journal(const JournalSuperblock& sb) {
  JournalBytes bytes{};
  jbd2::encode_journal_superblock(sb, bytes);
  return bytes;
}

JournalSuperblock decode_journal(const JournalBytes& bytes) { return jbd2::decode_journal_superblock(bytes); }

}  // namespace

TEST_CASE("jbd2 superblock round trips every field and its users", "[jbd2][superblock]") {
  const JournalSuperblock sb = journal_super_v3();
  const JournalBytes bytes = encode_journal(sb);
  CHECK(fscore::load_be<std::uint32_t>(bytes.data()) == jbd2::kMagic);  // big-endian on disk
  CHECK(fscore::load_be<std::uint32_t>(bytes.data() + 0x0C) == 4096u);
  const JournalSuperblock back = decode_journal(bytes);
  CHECK(back.blocktype == sb.blocktype);
  CHECK(back.block_size == sb.block_size);
  CHECK(back.maxlen == sb.maxlen);
  CHECK(back.first == sb.first);
  CHECK(back.sequence == sb.sequence);
  CHECK(back.start == sb.start);
  CHECK(back.errno_value == sb.errno_value);
  CHECK(back.feature_compat == sb.feature_compat);
  CHECK(back.feature_incompat == sb.feature_incompat);
  CHECK(back.feature_ro_compat == sb.feature_ro_compat);
  CHECK(back.uuid == sb.uuid);
  CHECK(back.nr_users == 3u);
  CHECK(back.max_transaction == sb.max_transaction);
  CHECK(back.max_trans_data == sb.max_trans_data);
  CHECK(back.checksum_type == sb.checksum_type);
  CHECK(back.num_fc_blocks == sb.num_fc_blocks);
  CHECK(back.head == sb.head);
  CHECK(back.users == sb.users);
  CHECK(back.has_csum_v2_or_v3());
}

TEST_CASE("jbd2 superblock holds 48 users and rejects 49", "[jbd2][superblock]") {
  JournalSuperblock sb = journal_super_v3();
  sb.users.clear();
  for (std::size_t i = 0; i < jbd2::kMaxUsers; ++i) sb.users.push_back(uuid_of(static_cast<std::uint8_t>(i)));
  sb.nr_users = static_cast<std::uint32_t>(sb.users.size());
  const JournalSuperblock back = decode_journal(encode_journal(sb));
  CHECK(back.users == sb.users);
  sb.nr_users = 49;
  CHECK_THROWS_WITH(decode_journal(encode_journal(sb)), Catch::Contains("users"));
}

TEST_CASE("jbd2 superblock checksum catches a flipped byte", "[jbd2][superblock]") {
  const JournalBytes good = encode_journal(journal_super_v3());
  REQUIRE_NOTHROW(decode_journal(good));
  for (const std::size_t at : {std::size_t{0x18}, std::size_t{0x30}, std::size_t{0x58}, std::size_t{0x100},
                               std::size_t{0x120}, std::size_t{0x3FF}}) {
    JournalBytes bad = good;
    bad[at] ^= 0x04;
    CAPTURE(at);
    CHECK_THROWS_AS(decode_journal(bad), std::runtime_error);
  }
  // Without checksums, the same edit goes through.
  JournalSuperblock plain = journal_super_v3();
  plain.feature_incompat = jbd2::feature::kIncompatRevoke;
  JournalBytes bytes = encode_journal(plain);
  bytes[0x18] ^= 0x04;
  CHECK(decode_journal(bytes).sequence == (0x10203040u ^ 0x04000000u));
}

TEST_CASE("jbd2 superblock decoding rejects bad magic block type and sizes", "[jbd2][superblock]") {
  auto rejects = [](const JournalSuperblock& sb, const char* what) {
    CAPTURE(what);
    CHECK_THROWS_AS(decode_journal(encode_journal(sb)), std::runtime_error);
  };
  JournalBytes zero{};
  CHECK_THROWS_WITH(decode_journal(zero), Catch::Contains("magic"));
  JournalSuperblock sb = journal_super_v3();
  sb.blocktype = 1;  // a descriptor block
  rejects(sb, "block type");
  sb = journal_super_v3();
  sb.block_size = 512;
  rejects(sb, "block size 512");
  sb = journal_super_v3();
  sb.block_size = 3000;
  rejects(sb, "block size not a power of two");
  sb = journal_super_v3();
  sb.first = 0;
  rejects(sb, "first log block 0");
  sb = journal_super_v3();
  sb.first = sb.maxlen;
  rejects(sb, "first log block past the end");
  sb = journal_super_v3();
  sb.start = sb.maxlen;
  rejects(sb, "start past the end");
  sb = journal_super_v3();
  sb.checksum_type = 1;
  rejects(sb, "v3 checksums without crc32c");
}

TEST_CASE("jbd2 version 1 superblock ignores the version 2 fields", "[jbd2][superblock]") {
  JournalSuperblock sb = journal_super_v3();
  sb.blocktype = 3;
  sb.feature_incompat = 0;
  sb.users = {uuid_of(1)};
  sb.nr_users = 1;
  const JournalSuperblock back = decode_journal(encode_journal(sb));
  CHECK(back.blocktype == 3u);
  CHECK(back.maxlen == sb.maxlen);
  CHECK(back.sequence == sb.sequence);
  CHECK(fscore::is_nil(back.uuid));
  CHECK(back.nr_users == 0u);
  CHECK(back.users.empty());
}

}  // namespace jbd2_superblock_test
