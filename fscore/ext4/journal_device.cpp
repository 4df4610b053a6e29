// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/journal_device.h"

#include <bit>
#include <stdexcept>
#include <vector>

#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/superblock.h"
#include "fscore/jbd2/journal_superblock.h"

namespace fscore::ext4 {

JournalDeviceLayout plan_journal_device(std::uint64_t device_bytes, std::uint32_t block_size) {
  if (block_size != 1024 && block_size != 2048 && block_size != 4096)
    throw std::invalid_argument("journal block size " + std::to_string(block_size) + ": ext4 here takes 1024, 2048 or 4096");
  JournalDeviceLayout l;
  l.blocks = device_bytes / block_size;
  l.superblock_block = kSuperOffset / block_size + 1;
  l.first_log_block = l.superblock_block + 1;
  constexpr std::uint64_t kMinLogBlocks = 1024;  // JBD2_MIN_JOURNAL_BLOCKS
  if (l.blocks < l.first_log_block + kMinLogBlocks)
    throw std::invalid_argument("journal device of " + std::to_string(device_bytes) + " bytes: needs at least " +
                                std::to_string((l.first_log_block + kMinLogBlocks) * block_size) + " for 1024 log blocks");
  if (l.blocks > 0xFFFFFFFFull) throw std::invalid_argument("journal device larger than 2^32 blocks");
  return l;
}

JournalDeviceLayout build_journal_device(const JournalDeviceOptions& o, BlockSink& sink) {
  if (o.label.size() > 16) throw std::invalid_argument("label '" + o.label + "' is longer than 16 bytes");
  const JournalDeviceLayout l = plan_journal_device(o.device_bytes, o.block_size);
  Superblock sb;
  sb.blocks_count = l.blocks;
  sb.first_data_block = o.block_size == 1024 ? 1 : 0;
  sb.log_block_size = static_cast<std::uint32_t>(std::countr_zero(o.block_size) - 10);
  sb.blocks_per_group = 8 * o.block_size;
  const auto now = static_cast<std::uint32_t>(o.now.sec);
  sb.write_time = sb.last_check = sb.mkfs_time = now;
  sb.feature_incompat = incompat::kJournalDev;
  sb.uuid = o.uuid;
  sb.volume_name = o.label;
  for (std::size_t i = 0; i < 4; ++i) sb.hash_seed[i] = load_le<std::uint32_t>(o.hash_seed.data() + 4 * i);
  sb.default_mount_opts = kMountOptsUserXattrAcl;
  sb.min_extra_isize = sb.want_extra_isize = kExtraIsize;
  std::vector<std::uint8_t> bytes(kSuperSize);
  encode_superblock(sb, std::span<std::uint8_t, kSuperSize>(bytes.data(), kSuperSize));
  sink.write(kSuperOffset, bytes);

  jbd2::JournalSuperblock jsb;
  jsb.block_size = o.block_size;
  jsb.maxlen = static_cast<std::uint32_t>(l.blocks);
  jsb.first = static_cast<std::uint32_t>(l.first_log_block);
  jsb.sequence = 1;
  jsb.uuid = o.uuid;
  jsb.nr_users = static_cast<std::uint32_t>(o.users.size());
  jsb.users = o.users;
  std::vector<std::uint8_t> block(o.block_size, 0);
  encode_journal_superblock(jsb, std::span<std::uint8_t, jbd2::kSuperblockSize>(block.data(), jbd2::kSuperblockSize));
  sink.write(l.superblock_block * o.block_size, block);
  return l;
}

}  // namespace fscore::ext4
