// SPDX-License-Identifier: BSD-3-Clause
// XFS log records made as the kernel writes them (xlog_sync, xlog_pack_data):
// header blocks, the data's first words set aside in the cycle data and
// replaced by the cycle (the next cycle for blocks past the end of the log,
// as a record that wraps stamps them), and the CRC over what then lies on
// disk. For tests and the fuzz driver: synthetic logs with records that
// wrap, stale ones and torn ones. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fscore/xfs/log_record.h"

namespace fscore::xfs {

struct RecordSpec {
  std::uint32_t cycle = 1;
  std::uint32_t block = 0;       // where its header goes
  Lsn tail;
  std::uint32_t operations = 1;
  std::uint32_t size = kCycleSpan;  // the log buffer's size: sets the header blocks
  bool crc = true;                  // false: 0, as mkfs writes it
};

// The record's blocks (header blocks, then the data rounded up to blocks),
// `data` its payload. `log_blocks`: the log's length, for the stamps of the
// blocks that wrap (0: none wrap).
std::vector<std::uint8_t> build_record(const RecordSpec& spec, std::span<const std::uint8_t> data,
                                       std::uint64_t log_blocks = 0);

// Writes `record` into `log` (whole basic blocks) from block `block`,
// going on at the log's start past its end.
void place_record(std::span<std::uint8_t> log, std::uint64_t block, std::span<const std::uint8_t> record);

}  // namespace fscore::xfs
