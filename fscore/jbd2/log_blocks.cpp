// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/jbd2/log_blocks.h"

#include <algorithm>
#include <array>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::jbd2 {
namespace {

constexpr std::size_t kRevokeHeaderBytes = 16;  // header + r_count
// Tag fields: t_blocknr @0, t_checksum be16 @4 (v2) / t_flags be32 @4 (v3),
// flags read as be16 @6 in both, t_blocknr_high @8, v3 checksum @12.
constexpr std::size_t kTagFlags = 6, kTagHigh = 8, kTagChecksumV2 = 4, kTagChecksumV3 = 12;
constexpr std::uint32_t kDefaultFastCommitBlocks = 256;

std::uint32_t checksum_with_zeroed(const LogFormat& format, std::span<const std::uint8_t> block, std::size_t at) {
  const std::uint8_t zero[4] = {0, 0, 0, 0};
  std::uint32_t crc = crc32c(format.seed, block.data(), at);
  crc = crc32c(crc, zero, 4);
  return crc32c(crc, block.data() + at + 4, block.size() - at - 4);
}

constexpr std::array<std::uint32_t, 256> make_crc32_be_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t r = i << 24;
    for (int k = 0; k < 8; ++k) r = (r & 0x80000000u) != 0 ? (r << 1) ^ 0x04C11DB7u : r << 1;
    table[i] = r;
  }
  return table;
}
constexpr auto kCrc32BeTable = make_crc32_be_table();

}  // namespace

std::optional<BlockHeader> read_block_header(std::span<const std::uint8_t> block) {
  if (block.size() < kLogBlockHeaderBytes || load_be<std::uint32_t>(block.data()) != kMagic) return std::nullopt;
  return BlockHeader{load_be<std::uint32_t>(block.data() + 4), load_be<std::uint32_t>(block.data() + 8)};
}

LogFormat LogFormat::from(const JournalSuperblock& sb) {
  LogFormat f;
  f.block_size = sb.block_size;
  f.bit64 = (sb.feature_incompat & feature::kIncompat64bit) != 0;
  f.csum_v1 = (sb.feature_compat & feature::kCompatChecksum) != 0;
  f.csum_v2 = (sb.feature_incompat & feature::kIncompatCsumV2) != 0;
  f.csum_v3 = (sb.feature_incompat & feature::kIncompatCsumV3) != 0;
  f.async_commit = (sb.feature_incompat & feature::kIncompatAsyncCommit) != 0;
  f.fast_commit = (sb.feature_incompat & feature::kIncompatFastCommit) != 0;
  f.seed = crc32c(~0u, sb.uuid.data(), sb.uuid.size());
  f.first = sb.first;
  f.maxlen = sb.maxlen;
  f.last = sb.maxlen;
  if (f.fast_commit) {
    const std::uint32_t fc = sb.num_fc_blocks != 0 ? sb.num_fc_blocks : kDefaultFastCommitBlocks;
    f.last = fc < sb.maxlen - sb.first ? sb.maxlen - fc : sb.maxlen;
  }
  return f;
}

std::size_t LogFormat::tag_bytes() const {
  if (csum_v3) return 16;
  std::size_t size = 12;
  if (csum_v2) size += 2;
  return bit64 ? size : size - 4;
}

std::size_t parse_descriptor_tags(const LogFormat& format, std::span<const std::uint8_t> block,
                                  std::vector<Tag>& out) {
  const std::size_t tag_size = format.tag_bytes();
  const std::size_t end = block.size() - std::min(block.size(), format.tail_bytes());
  std::size_t at = kLogBlockHeaderBytes;
  std::size_t count = 0;
  while (at + tag_size <= end) {
    const std::uint8_t* p = block.data() + at;
    Tag tag;
    tag.target = load_be<std::uint32_t>(p);
    tag.flags = load_be<std::uint16_t>(p + kTagFlags);
    if (format.bit64) tag.target |= std::uint64_t{load_be<std::uint32_t>(p + kTagHigh)} << 32;
    tag.checksum = format.csum_v3 ? load_be<std::uint32_t>(p + kTagChecksumV3) : load_be<std::uint16_t>(p + kTagChecksumV2);
    out.push_back(tag);
    ++count;
    at += tag_size;
    if ((tag.flags & tag_flag::kSameUuid) == 0) at += 16;
    if ((tag.flags & tag_flag::kLastTag) != 0) break;
  }
  return count;
}

std::size_t parse_revoke_records(const LogFormat& format, std::span<const std::uint8_t> block,
                                 std::vector<std::uint64_t>& out) {
  if (block.size() < kRevokeHeaderBytes) return 0;
  const std::uint32_t used = load_be<std::uint32_t>(block.data() + kLogBlockHeaderBytes);
  if (used > block.size() - format.tail_bytes()) return 0;  // recovery refuses such a block
  const std::size_t record = format.bit64 ? 8 : 4;
  std::size_t count = 0;
  for (std::size_t at = kRevokeHeaderBytes; at + record <= used; at += record, ++count)
    out.push_back(format.bit64 ? load_be<std::uint64_t>(block.data() + at) : load_be<std::uint32_t>(block.data() + at));
  return count;
}

CommitBlock parse_commit_block(std::span<const std::uint8_t> block) {
  CommitBlock c;
  if (block.size() < commit_at::kBytes) return c;
  c.checksum_type = block[commit_at::kChecksumType];
  c.checksum_size = block[commit_at::kChecksumSize];
  c.checksum = load_be<std::uint32_t>(block.data() + commit_at::kChecksum);
  c.seconds = load_be<std::uint64_t>(block.data() + commit_at::kSec);
  c.nanoseconds = load_be<std::uint32_t>(block.data() + commit_at::kNsec);
  return c;
}

bool block_tail_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block) {
  if (!format.csum_v2_or_v3()) return true;
  if (block.size() < kLogBlockHeaderBytes + 4) return false;
  const std::size_t at = block.size() - 4;
  return load_be<std::uint32_t>(block.data() + at) == checksum_with_zeroed(format, block, at);
}

bool commit_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block) {
  if (!format.csum_v2_or_v3()) return true;
  if (block.size() < commit_at::kBytes) return false;
  return load_be<std::uint32_t>(block.data() + commit_at::kChecksum) == checksum_with_zeroed(format, block, commit_at::kChecksum);
}

bool commit_header_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block) {
  if (!format.csum_v2_or_v3()) return true;
  if (block.size() < commit_at::kBytes) return false;
  std::vector<std::uint8_t> header(block.size(), 0);
  std::copy_n(block.begin(), commit_at::kBytes, header.begin());
  return load_be<std::uint32_t>(block.data() + commit_at::kChecksum) == checksum_with_zeroed(format, header, commit_at::kChecksum);
}

std::uint32_t logged_block_checksum(const LogFormat& format, std::uint32_t sequence,
                                    std::span<const std::uint8_t> logged) {
  std::uint8_t seq[4];
  store_be<std::uint32_t>(seq, sequence);
  return crc32c(crc32c(format.seed, seq, 4), logged.data(), logged.size());
}

bool tag_checksum_ok(const LogFormat& format, const Tag& tag, std::uint32_t sequence,
                     std::span<const std::uint8_t> logged) {
  if (!format.csum_v2_or_v3()) return true;
  const std::uint32_t sum = logged_block_checksum(format, sequence, logged);
  return format.csum_v3 ? tag.checksum == sum : tag.checksum == (sum & 0xFFFF);
}

void set_block_tail_checksum(const LogFormat& format, std::span<std::uint8_t> block) {
  if (!format.csum_v2_or_v3() || block.size() < kLogBlockHeaderBytes + 4) return;
  const std::size_t at = block.size() - 4;
  store_be<std::uint32_t>(block.data() + at, checksum_with_zeroed(format, block, at));
}

void set_commit_checksum(const LogFormat& format, std::span<std::uint8_t> block) {
  if (!format.csum_v2_or_v3() || block.size() < commit_at::kBytes) return;
  store_be<std::uint32_t>(block.data() + commit_at::kChecksum, checksum_with_zeroed(format, block, commit_at::kChecksum));
}

std::uint32_t crc32_be(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
  for (std::uint8_t b : bytes) crc = (crc << 8) ^ kCrc32BeTable[((crc >> 24) ^ b) & 0xFF];
  return crc;
}

}  // namespace fscore::jbd2
