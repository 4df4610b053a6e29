// SPDX-License-Identifier: BSD-3-Clause
// The jbd2 journal superblock (journal_superblock_t, big-endian), the first
// block of a journal: where the log starts, which transaction comes next,
// its features and, on an external journal device, the filesystems using
// it. Layout: ../shared facts from include/linux/jbd2.h.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fscore/uuid.h"

namespace fscore::jbd2 {

inline constexpr std::uint32_t kMagic = 0xC03B3998;
inline constexpr std::uint32_t kBlocktypeSuperblockV2 = 4;
inline constexpr std::size_t kSuperblockSize = 1024;
inline constexpr std::size_t kMaxUsers = 48;

namespace feature {
inline constexpr std::uint32_t kCompatChecksum = 0x1;
inline constexpr std::uint32_t kIncompatRevoke = 0x1;
inline constexpr std::uint32_t kIncompat64bit = 0x2;
inline constexpr std::uint32_t kIncompatAsyncCommit = 0x4;
inline constexpr std::uint32_t kIncompatCsumV2 = 0x8;
inline constexpr std::uint32_t kIncompatCsumV3 = 0x10;
inline constexpr std::uint32_t kIncompatFastCommit = 0x20;
}  // namespace feature

struct JournalSuperblock {
  std::uint32_t blocktype = kBlocktypeSuperblockV2;
  std::uint32_t block_size = 0;
  std::uint32_t maxlen = 0;    // blocks in the journal, superblock included
  std::uint32_t first = 1;     // first log block
  std::uint32_t sequence = 1;  // first transaction expected
  std::uint32_t start = 0;     // 0: clean, nothing to recover
  std::int32_t errno_value = 0;
  std::uint32_t feature_compat = 0;
  std::uint32_t feature_incompat = 0;
  std::uint32_t feature_ro_compat = 0;
  Uuid uuid{};
  std::uint32_t nr_users = 0;
  std::uint32_t max_transaction = 0;
  std::uint32_t max_trans_data = 0;
  std::uint8_t checksum_type = 0;  // 4: crc32c
  std::uint32_t num_fc_blocks = 0;
  std::uint32_t head = 0;
  std::vector<Uuid> users;  // external journals: the filesystems attached

  bool has_csum_v2_or_v3() const {
    return (feature_incompat & (feature::kIncompatCsumV2 | feature::kIncompatCsumV3)) != 0;
  }
};

// Encodes into 1024 bytes; the checksum is set with csum v2/v3.
void encode_journal_superblock(const JournalSuperblock& sb, std::span<std::uint8_t, kSuperblockSize> out);

// Decodes and checks: magic, block type, sizes, users, and the checksum
// when v2/v3 is on. Throws std::runtime_error naming the field.
JournalSuperblock decode_journal_superblock(std::span<const std::uint8_t, kSuperblockSize> in);

}  // namespace fscore::jbd2
