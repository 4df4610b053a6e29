// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/jbd2/journal_superblock.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::jbd2 {
namespace {

// Offsets in journal_superblock_t.
constexpr std::size_t kHMagic = 0x00, kHBlocktype = 0x04, kHSequence = 0x08, kBlocksize = 0x0C, kMaxlen = 0x10,
                      kFirst = 0x14, kSequence = 0x18, kStart = 0x1C, kErrno = 0x20, kFeatureCompat = 0x24,
                      kFeatureIncompat = 0x28, kFeatureRoCompat = 0x2C, kUuid = 0x30, kNrUsers = 0x40,
                      kMaxTransaction = 0x48, kMaxTransData = 0x4C, kChecksumType = 0x50,
                      kNumFcBlocks = 0x54, kHead = 0x58, kChecksum = 0xFC, kUsers = 0x100;
constexpr std::uint8_t kCrc32c = 4;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("jbd2 superblock: " + what); }

std::uint32_t checksum(std::span<const std::uint8_t, kSuperblockSize> bytes) {
  std::uint8_t copy[kSuperblockSize];
  std::memcpy(copy, bytes.data(), kSuperblockSize);
  std::memset(copy + kChecksum, 0, 4);
  return crc32c(~0u, copy, kSuperblockSize);
}

}  // namespace

void encode_journal_superblock(const JournalSuperblock& sb, std::span<std::uint8_t, kSuperblockSize> out) {
  std::uint8_t* p = out.data();
  std::memset(p, 0, out.size());
  store_be<std::uint32_t>(p + kHMagic, kMagic);
  store_be<std::uint32_t>(p + kHBlocktype, sb.blocktype);
  store_be<std::uint32_t>(p + kHSequence, 0);
  store_be<std::uint32_t>(p + kBlocksize, sb.block_size);
  store_be<std::uint32_t>(p + kMaxlen, sb.maxlen);
  store_be<std::uint32_t>(p + kFirst, sb.first);
  store_be<std::uint32_t>(p + kSequence, sb.sequence);
  store_be<std::uint32_t>(p + kStart, sb.start);
  store_be<std::uint32_t>(p + kErrno, static_cast<std::uint32_t>(sb.errno_value));
  store_be<std::uint32_t>(p + kFeatureCompat, sb.feature_compat);
  store_be<std::uint32_t>(p + kFeatureIncompat, sb.feature_incompat);
  store_be<std::uint32_t>(p + kFeatureRoCompat, sb.feature_ro_compat);
  std::memcpy(p + kUuid, sb.uuid.data(), 16);
  store_be<std::uint32_t>(p + kNrUsers, sb.nr_users);
  store_be<std::uint32_t>(p + kMaxTransaction, sb.max_transaction);
  store_be<std::uint32_t>(p + kMaxTransData, sb.max_trans_data);
  p[kChecksumType] = sb.checksum_type;
  store_be<std::uint32_t>(p + kNumFcBlocks, sb.num_fc_blocks);
  store_be<std::uint32_t>(p + kHead, sb.head);
  for (std::size_t i = 0; i < sb.users.size() && i < kMaxUsers; ++i)
    std::memcpy(p + kUsers + 16 * i, sb.users[i].data(), 16);
  if (sb.has_csum_v2_or_v3()) store_be<std::uint32_t>(p + kChecksum, checksum(out));
}

JournalSuperblock decode_journal_superblock(std::span<const std::uint8_t, kSuperblockSize> in) {
  const std::uint8_t* p = in.data();
  if (load_be<std::uint32_t>(p + kHMagic) != kMagic) fail("no jbd2 magic number");
  JournalSuperblock sb;
  sb.blocktype = load_be<std::uint32_t>(p + kHBlocktype);
  if (sb.blocktype != 3 && sb.blocktype != kBlocktypeSuperblockV2)
    fail("block type " + std::to_string(sb.blocktype) + " is not a superblock");
  sb.block_size = load_be<std::uint32_t>(p + kBlocksize);
  sb.maxlen = load_be<std::uint32_t>(p + kMaxlen);
  sb.first = load_be<std::uint32_t>(p + kFirst);
  sb.sequence = load_be<std::uint32_t>(p + kSequence);
  sb.start = load_be<std::uint32_t>(p + kStart);
  sb.errno_value = static_cast<std::int32_t>(load_be<std::uint32_t>(p + kErrno));
  if (sb.blocktype == kBlocktypeSuperblockV2) {
    sb.feature_compat = load_be<std::uint32_t>(p + kFeatureCompat);
    sb.feature_incompat = load_be<std::uint32_t>(p + kFeatureIncompat);
    sb.feature_ro_compat = load_be<std::uint32_t>(p + kFeatureRoCompat);
    std::memcpy(sb.uuid.data(), p + kUuid, 16);
    sb.nr_users = load_be<std::uint32_t>(p + kNrUsers);
    sb.max_transaction = load_be<std::uint32_t>(p + kMaxTransaction);
    sb.max_trans_data = load_be<std::uint32_t>(p + kMaxTransData);
    sb.checksum_type = p[kChecksumType];
    sb.num_fc_blocks = load_be<std::uint32_t>(p + kNumFcBlocks);
    sb.head = load_be<std::uint32_t>(p + kHead);
  }
  if (sb.block_size < 1024 || sb.block_size > 65536 || (sb.block_size & (sb.block_size - 1)) != 0)
    fail("block size " + std::to_string(sb.block_size) + " is not a power of two from 1024 to 65536");
  if (sb.first == 0 || sb.first >= sb.maxlen) fail("first log block outside the journal");
  if (sb.start != 0 && (sb.start < sb.first || sb.start >= sb.maxlen)) fail("log start outside the journal");
  if (sb.nr_users > kMaxUsers) fail(std::to_string(sb.nr_users) + " users (at most 48)");
  if (sb.has_csum_v2_or_v3()) {
    if (sb.checksum_type != kCrc32c) fail("checksum v2/v3 without crc32c");
    if (load_be<std::uint32_t>(p + kChecksum) != checksum(in)) fail("checksum does not match");
  }
  for (std::uint32_t i = 0; i < sb.nr_users; ++i) {
    Uuid u;
    std::memcpy(u.data(), p + kUsers + 16 * i, 16);
    sb.users.push_back(u);
  }
  return sb;
}

}  // namespace fscore::jbd2
