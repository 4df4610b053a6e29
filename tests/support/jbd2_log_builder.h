// SPDX-License-Identifier: BSD-3-Clause
// LogBuilder: lays out jbd2 transactions as the kernel's commit does
// (fs/jbd2/commit.c): revoke blocks first, then descriptor blocks each
// followed by the blocks its tags describe (escaped where a block begins with
// the magic), then the commit block, on consecutive log blocks that wrap from
// the end of the log to its first block, with the journal's checksums. Used
// to make journals whose content is known (tests, fuzz seeds, benchmarks).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fscore/jbd2/journal_superblock.h"
#include "fscore/jbd2/log_blocks.h"

namespace fscore::jbd2 {

struct LogBlockWrite {
  std::uint32_t log_block = 0;
  std::vector<std::uint8_t> bytes;  // one block
};

class LogBuilder {
 public:
  // Transactions start at log block `head` with id `tid`.
  LogBuilder(const JournalSuperblock& sb, std::uint32_t head, std::uint32_t tid);

  // Queue the blocks of the transaction being built.
  void revoke(std::uint64_t target) { revoked_.push_back(target); }
  void log(std::uint64_t target, std::span<const std::uint8_t> content);
  // Lays the queued transaction out (kernel time stamp in the commit block)
  // and appends its blocks to the output. Returns the blocks it took.
  std::size_t commit(std::uint64_t seconds = 0, std::uint32_t nanoseconds = 0);
  // The same without the commit block: a transaction cut short.
  std::size_t abandon();

  std::vector<LogBlockWrite>& blocks() { return out_; }
  std::uint32_t head() const { return head_; }
  std::uint32_t next_tid() const { return tid_; }
  const LogFormat& format() const { return format_; }
  // How many tags fit in one descriptor block.
  std::size_t tags_per_descriptor() const;

 private:
  std::vector<std::uint8_t>& emit();  // a zeroed block at the head
  void header(std::vector<std::uint8_t>& block, BlockType type) const;
  std::size_t lay_out(bool with_commit, std::uint64_t seconds, std::uint32_t nanoseconds);

  LogFormat format_;
  Uuid uuid_{};
  std::uint32_t head_;
  std::uint32_t tid_;
  std::vector<std::uint64_t> revoked_;
  struct Logged {
    std::uint64_t target;
    std::vector<std::uint8_t> content;
  };
  std::vector<Logged> logged_;
  std::vector<LogBlockWrite> out_;
};

}  // namespace fscore::jbd2
