// SPDX-License-Identifier: BSD-3-Clause
// The kernel's own journal counters: /proc/fs/jbd2/<device>-<inode>/info.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nvj::cli {

struct Jbd2Info {
  std::uint64_t transactions = 0;
  std::uint64_t requested = 0;
  std::uint64_t commit_time_us = 0;         // average
  std::uint64_t handles_per_transaction = 0;
  std::uint64_t blocks_per_transaction = 0;
  std::uint64_t logged_blocks_per_transaction = 0;
};

// Parses the text of an info file. Throws std::runtime_error if it is not one.
Jbd2Info parse_jbd2_info(const std::string& text);

// The info of the journal on `journal_device` (/proc/fs/jbd2/loop1/info for
// an external journal on /dev/loop1, loop0-8 for inode 8 of /dev/loop0), if
// the kernel has one.
std::optional<Jbd2Info> read_jbd2_info(const std::string& journal_device);

}  // namespace nvj::cli
