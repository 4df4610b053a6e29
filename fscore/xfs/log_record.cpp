// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/xfs/log_record.h"

#include <algorithm>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::xfs {

namespace {

constexpr std::size_t kCrcOffset = 32;
constexpr std::size_t kHeaderCrcSpan = 328;      // what the CRC covers of the header
constexpr std::size_t kHeaderCrcSpanI386 = 324;  // the same, as 32-bit x86 kernels packed it
constexpr std::size_t kExtendedCrcSpan = 4 + kCycleWords * 4;

std::uint32_t crc_of(const LogRecordHeader& h, std::span<const std::uint8_t> record, std::size_t header_span) {
  std::array<std::uint8_t, kHeaderCrcSpan> head{};
  std::copy_n(record.begin(), header_span, head.begin());
  std::fill_n(head.begin() + kCrcOffset, 4, 0);
  std::uint32_t crc = crc32c(~0u, head.data(), header_span);
  const std::uint32_t covering = std::max<std::uint32_t>(1, (h.len + kCycleSpan - 1) / kCycleSpan);
  for (std::uint32_t j = 1; j < std::min(covering, header_blocks(h)); ++j)
    crc = crc32c(crc, record.data() + j * kBasicBlock, kExtendedCrcSpan);
  crc = crc32c(crc, record.data() + std::size_t{header_blocks(h)} * kBasicBlock, h.len);
  return ~crc;
}

}  // namespace

std::string to_string(const Lsn& lsn) { return std::to_string(lsn.cycle) + ":" + std::to_string(lsn.block); }

const char* to_string(CrcCheck check) {
  switch (check) {
    case CrcCheck::ok: return "ok";
    case CrcCheck::bad: return "bad";
    case CrcCheck::absent: return "absent";
  }
  return "unknown";
}

std::optional<LogRecordHeader> parse_record_header(std::span<const std::uint8_t> block) {
  if (block.size() < kBasicBlock) return std::nullopt;
  const std::uint8_t* p = block.data();
  if (load_be<std::uint32_t>(p) != kLogMagic) return std::nullopt;
  LogRecordHeader h;
  h.cycle = load_be<std::uint32_t>(p + 4);
  h.version = load_be<std::uint32_t>(p + 8);
  h.len = load_be<std::uint32_t>(p + 12);
  h.lsn = Lsn::from(load_be<std::uint64_t>(p + 16));
  h.tail = Lsn::from(load_be<std::uint64_t>(p + 24));
  h.crc = load_le<std::uint32_t>(p + kCrcOffset);
  h.prev_block = static_cast<std::int32_t>(load_be<std::uint32_t>(p + 36));
  h.operations = load_be<std::uint32_t>(p + 40);
  h.format = load_be<std::uint32_t>(p + 300);
  std::copy_n(p + 304, 16, h.uuid.begin());
  h.size = load_be<std::uint32_t>(p + 320);
  if (h.version != 1 && h.version != 2) return std::nullopt;
  if (h.cycle == 0 || h.lsn.cycle != h.cycle) return std::nullopt;
  if (h.len > kMaxLogBuffer || h.size > kMaxLogBuffer) return std::nullopt;
  return h;
}

std::uint32_t header_blocks(const LogRecordHeader& h) {
  if (h.version == 2 && h.size > kCycleSpan) return (h.size + kCycleSpan - 1) / kCycleSpan;
  return 1;
}

std::uint32_t data_blocks(const LogRecordHeader& h) {
  return static_cast<std::uint32_t>((std::uint64_t{h.len} + kBasicBlock - 1) / kBasicBlock);
}

std::uint32_t record_crc(const LogRecordHeader& h, std::span<const std::uint8_t> record) {
  if (record.size() < (std::size_t{header_blocks(h)} + data_blocks(h)) * kBasicBlock)
    throw std::invalid_argument("xfs record: " + std::to_string(record.size()) + " bytes, shorter than its blocks");
  return crc_of(h, record, kHeaderCrcSpan);
}

CrcCheck check_record_crc(const LogRecordHeader& h, std::span<const std::uint8_t> record) {
  if (h.crc == 0) return CrcCheck::absent;
  if (record.size() < (std::size_t{header_blocks(h)} + data_blocks(h)) * kBasicBlock) return CrcCheck::bad;
  if (crc_of(h, record, kHeaderCrcSpan) == h.crc || crc_of(h, record, kHeaderCrcSpanI386) == h.crc)
    return CrcCheck::ok;
  return CrcCheck::bad;
}

}  // namespace fscore::xfs
