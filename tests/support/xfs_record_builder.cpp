// SPDX-License-Identifier: BSD-3-Clause
#include "tests/support/xfs_record_builder.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "fscore/endian.h"

namespace fscore::xfs {

std::vector<std::uint8_t> build_record(const RecordSpec& spec, std::span<const std::uint8_t> data,
                                       std::uint64_t log_blocks) {
  if (data.size() > kMaxLogBuffer || spec.size > kMaxLogBuffer || spec.cycle == 0)
    throw std::invalid_argument("xfs record: " + std::to_string(data.size()) + " bytes of data, a log buffer of " +
                                std::to_string(spec.size) + ", cycle " + std::to_string(spec.cycle));
  LogRecordHeader h;
  h.version = 2;
  h.size = spec.size;
  h.len = static_cast<std::uint32_t>(data.size());
  const std::uint32_t hblocks = header_blocks(h);
  const std::uint32_t dblocks = data_blocks(h);
  if (dblocks > hblocks * kCycleWords)
    throw std::invalid_argument("xfs record: " + std::to_string(dblocks) + " data blocks, more than " +
                                std::to_string(hblocks) + " header blocks keep words of");
  std::vector<std::uint8_t> r(std::size_t{hblocks + dblocks} * kBasicBlock, 0);
  std::uint8_t* p = r.data();
  if (p == nullptr) throw std::logic_error("xfs record: no blocks");  // never: at least the header's (for GCC's -Wnull-dereference)
  store_be<std::uint32_t>(p + 0, kLogMagic);
  store_be<std::uint32_t>(p + 4, spec.cycle);
  store_be<std::uint32_t>(p + 8, h.version);
  store_be<std::uint32_t>(p + 12, h.len);
  store_be<std::uint64_t>(p + 16, std::uint64_t{spec.cycle} << 32 | spec.block);
  store_be<std::uint64_t>(p + 24, std::uint64_t{spec.tail.cycle} << 32 | spec.tail.block);
  store_be<std::uint32_t>(p + 36, spec.block == 0 ? 0xFFFFFFFFu : spec.block - 1);
  store_be<std::uint32_t>(p + 40, spec.operations);
  store_be<std::uint32_t>(p + 300, 1);
  store_be<std::uint32_t>(p + 320, spec.size);
  const auto stamp_of = [&](std::uint64_t i) {  // the cycle of the record's i-th block on disk
    return log_blocks != 0 && spec.block + i >= log_blocks ? spec.cycle + 1 : spec.cycle;
  };
  for (std::uint32_t j = 1; j < hblocks; ++j) store_be<std::uint32_t>(p + j * kBasicBlock, stamp_of(j));
  std::copy(data.begin(), data.end(), r.begin() + static_cast<std::ptrdiff_t>(hblocks * kBasicBlock));
  for (std::uint32_t i = 0; i < dblocks; ++i) {
    std::uint8_t* d = p + std::size_t{hblocks + i} * kBasicBlock;
    std::uint8_t* slot = p + (i / kCycleWords) * kBasicBlock + (i < kCycleWords ? 44 : 4) + (i % kCycleWords) * 4;
    std::copy_n(d, 4, slot);
    store_be<std::uint32_t>(d, stamp_of(hblocks + i));
  }
  if (spec.crc) store_le<std::uint32_t>(p + 32, record_crc(h, r));
  return r;
}

void place_record(std::span<std::uint8_t> log, std::uint64_t block, std::span<const std::uint8_t> record) {
  const std::uint64_t blocks = log.size() / kBasicBlock;
  if (blocks == 0 || record.size() / kBasicBlock > blocks) throw std::invalid_argument("xfs record: longer than the log");
  for (std::size_t i = 0; i < record.size() / kBasicBlock; ++i)
    std::copy_n(record.begin() + static_cast<std::ptrdiff_t>(i * kBasicBlock), kBasicBlock,
                log.begin() + static_cast<std::ptrdiff_t>(((block + i) % blocks) * kBasicBlock));
}

}  // namespace fscore::xfs
