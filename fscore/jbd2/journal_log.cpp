// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/jbd2/journal_log.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fscore::jbd2 {

JournalLog::JournalLog(const BlockSource& device, std::uint32_t block_size, std::uint32_t maxlen,
                       std::vector<LogRun> runs)
    : device_(device), block_size_(block_size), maxlen_(maxlen), runs_(std::move(runs)) {
  std::uint64_t at = 0;
  for (const LogRun& r : runs_) {
    run_starts_.push_back(at);
    at += r.count;
  }
}

std::uint64_t JournalLog::device_offset(std::uint32_t log_block) const {
  if (log_block >= maxlen_)
    throw std::runtime_error("log block " + std::to_string(log_block) + " is past the journal's " +
                             std::to_string(maxlen_) + " blocks");
  if (runs_.empty()) return std::uint64_t{log_block} * block_size_;
  const auto it = std::upper_bound(run_starts_.begin(), run_starts_.end(), std::uint64_t{log_block});
  const std::size_t i = static_cast<std::size_t>(it - run_starts_.begin()) - 1;
  const std::uint64_t within = log_block - run_starts_[i];
  if (within >= runs_[i].count)
    throw std::runtime_error("log block " + std::to_string(log_block) + " is not mapped by the journal inode");
  return (runs_[i].first_block + within) * block_size_;
}

void JournalLog::read(std::uint32_t log_block, std::span<std::uint8_t> out) const {
  const std::uint64_t at = device_offset(log_block);
  if (at + out.size() > device_.size())
    throw std::runtime_error("log block " + std::to_string(log_block) + " is past the end of the device");
  device_.read(at, out);
}

}  // namespace fscore::jbd2
