// SPDX-License-Identifier: BSD-3-Clause
// An XFS log record as it lies on the log device (the kernel's and
// xfsprogs' xfs_log_format.h, xlog_rec_header; nvj(1), XFS LOG FORMAT, says
// the same for users). The log is a ring of 512-byte basic
// blocks; a record is its header block (and, for v2 logs with log buffers
// larger than 32 KiB, extended header blocks), then its data blocks. The
// first 4 bytes of every data block are overwritten with the log's cycle
// (the words they held are kept in the headers' cycle data), so a block
// that starts with the magic number is a record header and any other block
// starts with the cycle it was written in. Pure.
//
// The header (one basic block, big-endian except the CRC):
//
//   offset  size  field
//        0     4  magic 0xFEEDBABE
//        4     4  cycle: the log's cycle when the record was written
//        8     4  version: 1, or 2 (v2 logs: every v5 filesystem)
//       12     4  len: bytes of data after the header blocks (v2: rounded
//                 up to the log stripe unit with them)
//       16     8  lsn: this record's (cycle << 32 | its header's block)
//       24     8  tail lsn: the log's tail when it was written
//       32     4  crc: CRC-32C, little-endian, 0 when not computed
//       36     4  previous record's block
//       40     4  operations in the record
//       44   256  cycle data: the first word of data blocks 0 to 63
//      300     4  format (1: Linux little-endian)
//      304    16  filesystem uuid
//      320     4  size: the log buffer's size, bytes (sets the header blocks)
//
// An extended header block: the cycle (4), then the first words of the next
// 64 data blocks (256).
//
// The CRC: the standard CRC-32C over header bytes [0, 328) with the CRC
// field taken as zero, then bytes [0, 260) of each extended header that
// covers data, then the data blocks as they are on disk (stamped). Kernels
// on 32-bit x86 covered [0, 324) of the header: that span is accepted too.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fscore::xfs {

inline constexpr std::uint32_t kLogMagic = 0xFEEDBABE;
inline constexpr std::size_t kBasicBlock = 512;
inline constexpr std::uint32_t kCycleSpan = 32768;        // data bytes one header block's cycle data covers
inline constexpr std::size_t kCycleWords = kCycleSpan / kBasicBlock;  // 64
inline constexpr std::uint32_t kMaxLogBuffer = 256 * 1024;  // the largest log buffer (logbsize)

// A log sequence number: a cycle and a basic block of the log.
struct Lsn {
  std::uint32_t cycle = 0;
  std::uint32_t block = 0;
  static Lsn from(std::uint64_t packed) {
    return {static_cast<std::uint32_t>(packed >> 32), static_cast<std::uint32_t>(packed)};
  }
  bool operator==(const Lsn&) const = default;
  auto operator<=>(const Lsn&) const = default;
};
// "CYCLE:BLOCK", as the kernel's sysfs files write them.
std::string to_string(const Lsn& lsn);

struct LogRecordHeader {
  std::uint32_t cycle = 0;
  std::uint32_t version = 0;
  std::uint32_t len = 0;  // bytes of data
  Lsn lsn;
  Lsn tail;
  std::uint32_t crc = 0;
  std::int32_t prev_block = 0;
  std::uint32_t operations = 0;
  std::uint32_t format = 0;
  std::array<std::uint8_t, 16> uuid{};
  std::uint32_t size = 0;  // the log buffer's size
};

// The header `block` (at least 512 bytes) holds, or nothing when it is not
// one: the magic, version 1 or 2, the cycle its LSN says, a length and a
// buffer size no log buffer exceeds.
std::optional<LogRecordHeader> parse_record_header(std::span<const std::uint8_t> block);

// Basic blocks of the header (1, or one per 32 KiB of a v2 log buffer) and
// of the data (the length rounded up to blocks).
std::uint32_t header_blocks(const LogRecordHeader& h);
std::uint32_t data_blocks(const LogRecordHeader& h);

enum class CrcCheck : std::uint8_t { ok, bad, absent };  // absent: the field is 0 (mkfs, xfs_repair)
const char* to_string(CrcCheck check);

// The CRC of a record, `record` holding its header blocks then its data
// blocks as they lie on disk (header_blocks + data_blocks blocks).
CrcCheck check_record_crc(const LogRecordHeader& h, std::span<const std::uint8_t> record);

// The CRC today's kernels write for such a record (its header's 328-byte
// span), whatever its CRC field holds: what a writer stores there.
std::uint32_t record_crc(const LogRecordHeader& h, std::span<const std::uint8_t> record);

}  // namespace fscore::xfs
