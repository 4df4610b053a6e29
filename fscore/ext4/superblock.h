// SPDX-License-Identifier: BSD-3-Clause
// The ext4 superblock: the fields this project sets or reads, encoded into
// and decoded from the 1024 bytes at byte 1024 of the device (and at the
// start of each backup group). Layout: Documentation/filesystems/ext4/super.rst.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "fscore/uuid.h"

namespace fscore::ext4 {

struct Superblock {
  std::uint32_t inodes_count = 0;
  std::uint64_t blocks_count = 0;
  std::uint64_t reserved_blocks = 0;
  std::uint64_t free_blocks = 0;
  std::uint32_t free_inodes = 0;
  std::uint32_t first_data_block = 0;
  std::uint32_t log_block_size = 0;  // block size = 1024 << log_block_size
  std::uint32_t blocks_per_group = 0;
  std::uint32_t inodes_per_group = 0;
  std::uint32_t mount_time = 0;
  std::uint32_t write_time = 0;
  std::uint16_t magic = 0;
  std::uint16_t state = 1;   // cleanly unmounted
  std::uint16_t errors = 1;  // continue
  std::uint32_t last_check = 0;
  std::uint32_t rev_level = 1;
  std::uint32_t first_ino = 11;
  std::uint16_t inode_size = 256;
  std::uint16_t block_group_nr = 0;  // which copy this is
  std::uint32_t feature_compat = 0;
  std::uint32_t feature_incompat = 0;
  std::uint32_t feature_ro_compat = 0;
  Uuid uuid{};
  std::string volume_name;  // at most 16 bytes
  Uuid journal_uuid{};
  std::uint32_t journal_inum = 0;
  std::uint32_t journal_dev = 0;
  std::array<std::uint32_t, 4> hash_seed{};
  std::uint8_t def_hash_version = 1;  // half_md4
  std::uint8_t jnl_backup_type = 0;
  std::uint16_t desc_size = 0;
  std::uint32_t default_mount_opts = 0;
  std::uint32_t mkfs_time = 0;
  std::array<std::uint32_t, 17> jnl_blocks{};
  std::uint16_t min_extra_isize = 0;
  std::uint16_t want_extra_isize = 0;
  std::uint32_t flags = 0;
  std::uint8_t log_groups_per_flex = 0;
  std::uint8_t checksum_type = 0;
  std::uint32_t checksum_seed = 0;  // only with the csum_seed feature
  std::uint32_t last_orphan = 0;    // s_last_orphan: the first inode of the orphan list (0: none)

  std::uint32_t block_size() const { return 1024u << log_block_size; }
  bool has_metadata_csum() const;
  // The seed of every metadata_csum checksum: s_checksum_seed with the
  // csum_seed feature, else the crc32c of the uuid.
  std::uint32_t csum_seed() const;
};

inline constexpr std::uint32_t kMountOptsUserXattrAcl = 0x000C;
inline constexpr std::uint32_t kFlagsSignedHash = 0x0001;

// Writes the 1024-byte superblock, with its checksum when metadata_csum is on.
void encode_superblock(const Superblock& sb, std::span<std::uint8_t, 1024> out);

// Reads one back. Throws std::runtime_error naming what is wrong: not ext4
// (magic), a bad checksum, or values that make no sense (block size,
// groups, counts); the reader relies on what this accepts.
Superblock decode_superblock(std::span<const std::uint8_t, 1024> in);

// crc32c of the superblock bytes before the checksum field.
std::uint32_t superblock_checksum(std::span<const std::uint8_t, 1024> bytes);

}  // namespace fscore::ext4
