// SPDX-License-Identifier: BSD-3-Clause
// An external journal device, as `mke2fs -O journal_dev` makes one: an ext2
// superblock with the journal_dev feature at byte 1024 and no groups, then
// the jbd2 superblock in the block after it (block 1 with 2 and 4 KiB
// blocks, block 2 with 1 KiB), then the log. Log block numbers are device
// block numbers (the kernel's ext4_get_dev_journal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/inode.h"
#include "fscore/uuid.h"

namespace fscore::ext4 {

struct JournalDeviceOptions {
  std::uint64_t device_bytes = 0;
  std::uint32_t block_size = 4096;  // must be the filesystem's
  Uuid uuid{};                      // the journal's; the filesystem names it in s_journal_uuid
  Uuid hash_seed{};
  std::string label;
  Timestamp now;
  std::vector<Uuid> users;  // filesystems attached (s_nr_users); one for ext4
};

struct JournalDeviceLayout {
  std::uint64_t blocks = 0;            // device blocks (s_maxlen)
  std::uint64_t superblock_block = 0;  // where the jbd2 superblock is
  std::uint64_t first_log_block = 0;   // s_first
};

// The layout a device of this size and block size gets; throws
// std::invalid_argument naming what is wrong (fewer than 1024 log blocks,
// a block size ext4 does not take).
JournalDeviceLayout plan_journal_device(std::uint64_t device_bytes, std::uint32_t block_size);

JournalDeviceLayout build_journal_device(const JournalDeviceOptions& options, BlockSink& sink);

}  // namespace fscore::ext4
