// SPDX-License-Identifier: BSD-3-Clause
// The blocks of a jbd2 log other than the superblock: the common header,
// descriptor blocks and their tags, revoke blocks, commit blocks, and the
// checksums that protect them (include/linux/jbd2.h; ../shared facts in
// formats.md). Pure parsing of one block at a time; every read is bounded by
// the block, so any bytes are safe input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fscore/jbd2/journal_superblock.h"

namespace fscore::jbd2 {

enum class BlockType : std::uint32_t {
  kDescriptor = 1,
  kCommit = 2,
  kSuperblockV1 = 3,
  kSuperblockV2 = 4,
  kRevoke = 5,
  kFastCommit = 6,
};

// Every log block but a data block starts with a header of this many bytes:
// the magic, the block type and the transaction's sequence, big-endian.
inline constexpr std::size_t kLogBlockHeaderBytes = 12;

namespace tag_flag {
inline constexpr std::uint32_t kEscape = 0x1;    // the block began with the magic: restore it
inline constexpr std::uint32_t kSameUuid = 0x2;  // no 16-byte uuid follows this tag
inline constexpr std::uint32_t kDeleted = 0x4;
inline constexpr std::uint32_t kLastTag = 0x8;
}  // namespace tag_flag

// Offsets in commit_header: h_chksum_type, h_chksum_size, h_chksum[0],
// h_commit_sec, h_commit_nsec, and its size.
namespace commit_at {
inline constexpr std::size_t kChecksumType = 12, kChecksumSize = 13, kChecksum = 16, kSec = 48, kNsec = 56,
                             kBytes = 60;
}  // namespace commit_at

// h_chksum_type values a commit block names (JBD2_CRC32_CHKSUM, ...CRC32C).
inline constexpr std::uint8_t kCrc32Checksum = 1, kCrc32cChecksum = 4;

// journal_header_t: magic, block type, transaction id.
struct BlockHeader {
  std::uint32_t type = 0;
  std::uint32_t sequence = 0;
};
// nullopt when the block is shorter than a header or lacks the magic.
std::optional<BlockHeader> read_block_header(std::span<const std::uint8_t> block);

// What the superblock's features say about the shape of log blocks.
struct LogFormat {
  std::uint32_t block_size = 4096;
  bool bit64 = false;         // 64-bit block numbers in tags and revokes
  bool csum_v1 = false;       // compat CHECKSUM: crc32 over the transaction in the commit
  bool csum_v2 = false;
  bool csum_v3 = false;
  bool async_commit = false;
  bool fast_commit = false;
  std::uint32_t seed = 0;     // crc32c(~0, uuid): the start of every v2/v3 checksum
  std::uint32_t first = 1;    // first log block
  std::uint32_t last = 0;     // one past the last log block (fast-commit area excluded)
  std::uint32_t maxlen = 0;   // blocks in the journal

  static LogFormat from(const JournalSuperblock& sb);
  bool csum_v2_or_v3() const { return csum_v2 || csum_v3; }
  // Bytes of one tag, not counting a uuid that may follow.
  std::size_t tag_bytes() const;
  // Bytes at the end of descriptor and revoke blocks for the checksum tail.
  std::size_t tail_bytes() const { return csum_v2_or_v3() ? 4 : 0; }
};

struct Tag {
  std::uint64_t target = 0;  // the block's home on the filesystem device
  std::uint32_t flags = 0;
  std::uint32_t checksum = 0;  // v2: low 16 bits; v3: 32 bits
  bool escaped() const { return (flags & tag_flag::kEscape) != 0; }
};

// Appends the tags of a descriptor block, in order, stopping at LAST_TAG or
// where no further tag fits, as recovery does. Returns the count appended.
std::size_t parse_descriptor_tags(const LogFormat& format, std::span<const std::uint8_t> block, std::vector<Tag>& out);

// Appends the revoked block numbers of a revoke block (r_count bounded by the
// block). Returns the count appended.
std::size_t parse_revoke_records(const LogFormat& format, std::span<const std::uint8_t> block,
                                 std::vector<std::uint64_t>& out);

struct CommitBlock {
  std::uint64_t seconds = 0;  // h_commit_sec: when the kernel wrote it
  std::uint32_t nanoseconds = 0;
  std::uint8_t checksum_type = 0;
  std::uint8_t checksum_size = 0;
  std::uint32_t checksum = 0;  // h_chksum[0]
};
CommitBlock parse_commit_block(std::span<const std::uint8_t> block);

// Checksums (v2/v3; true when the journal has none to check).
// Descriptor and revoke blocks: the tail is crc32c(seed, block with tail 0).
bool block_tail_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block);
// Commit block: h_chksum[0] = crc32c(seed, block with h_chksum[0] = 0).
bool commit_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block);
// The same checksum over the commit header alone followed by zeros: what a
// commit block whose first sector landed and whose rest did not still
// proves (jbd2 writes the header into a zeroed block).
bool commit_header_checksum_ok(const LogFormat& format, std::span<const std::uint8_t> block);
// A logged block against its tag: crc32c(crc32c(seed, be32 sequence), block
// as logged), 16 bits of it with v2.
bool tag_checksum_ok(const LogFormat& format, const Tag& tag, std::uint32_t sequence,
                     std::span<const std::uint8_t> logged);

// Writers' side, for tests and tools that build logs: set the tail or commit
// checksum of a block in place, and compute a tag's checksum.
void set_block_tail_checksum(const LogFormat& format, std::span<std::uint8_t> block);
void set_commit_checksum(const LogFormat& format, std::span<std::uint8_t> block);
std::uint32_t logged_block_checksum(const LogFormat& format, std::uint32_t sequence,
                                    std::span<const std::uint8_t> logged);

// crc32 (big-endian, polynomial 0x04C11DB7, no inversion), as jbd2's v1
// transaction checksum uses it.
std::uint32_t crc32_be(std::uint32_t crc, std::span<const std::uint8_t> bytes);

// tid comparison modulo 2^32, as jbd2's tid_gt().
inline bool tid_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

}  // namespace fscore::jbd2
