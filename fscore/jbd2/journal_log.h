// SPDX-License-Identifier: BSD-3-Clause
// JournalLog: a journal's blocks by log block number, wherever they live:
// on a journal device (log block N is device block N) or in an internal
// journal's inode (runs of filesystem blocks, in log order). Reads are
// bounded by the journal's length and the runs; anything outside is a
// std::runtime_error naming the log block.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fscore/block_io.h"

namespace fscore::jbd2 {

struct LogRun {
  std::uint64_t first_block = 0;  // on the device
  std::uint64_t count = 0;
};

class JournalLog {
 public:
  // `runs` empty: the identity map of a journal device.
  JournalLog(const BlockSource& device, std::uint32_t block_size, std::uint32_t maxlen, std::vector<LogRun> runs);

  std::uint32_t block_size() const { return block_size_; }
  std::uint32_t maxlen() const { return maxlen_; }
  // The device byte offset of a log block.
  std::uint64_t device_offset(std::uint32_t log_block) const;
  void read(std::uint32_t log_block, std::span<std::uint8_t> out) const;
  const BlockSource& device() const { return device_; }

 private:
  const BlockSource& device_;
  std::uint32_t block_size_;
  std::uint32_t maxlen_;
  std::vector<LogRun> runs_;
  std::vector<std::uint64_t> run_starts_;  // first log block of each run
};

}  // namespace fscore::jbd2
