// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/superblock.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"

namespace fscore::ext4 {
namespace {

using namespace sb;  // the field offsets

std::uint32_t lo32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi32(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

void bad_superblock(const std::string& what) { throw std::runtime_error("ext4 superblock: " + what); }

}  // namespace

bool Superblock::has_metadata_csum() const { return (feature_ro_compat & ro_compat::kMetadataCsum) != 0; }

std::uint32_t Superblock::csum_seed() const {
  if ((feature_incompat & incompat::kCsumSeed) != 0) return checksum_seed;
  return crc32c(~0u, uuid.data(), uuid.size());
}

std::uint32_t superblock_checksum(std::span<const std::uint8_t, 1024> bytes) {
  return crc32c(~0u, bytes.data(), kChecksum);
}

void encode_superblock(const Superblock& sb, std::span<std::uint8_t, 1024> out) {
  std::uint8_t* p = out.data();
  std::memset(p, 0, out.size());
  const bool is64 = (sb.feature_incompat & incompat::k64bit) != 0;
  store_le<std::uint32_t>(p + kInodesCount, sb.inodes_count);
  store_le<std::uint32_t>(p + kBlocksCountLo, lo32(sb.blocks_count));
  store_le<std::uint32_t>(p + kRBlocksCountLo, lo32(sb.reserved_blocks));
  store_le<std::uint32_t>(p + kFreeBlocksLo, lo32(sb.free_blocks));
  store_le<std::uint32_t>(p + kFreeInodes, sb.free_inodes);
  store_le<std::uint32_t>(p + kFirstDataBlock, sb.first_data_block);
  store_le<std::uint32_t>(p + kLogBlockSize, sb.log_block_size);
  store_le<std::uint32_t>(p + kLogClusterSize, sb.log_block_size);
  store_le<std::uint32_t>(p + kBlocksPerGroup, sb.blocks_per_group);
  store_le<std::uint32_t>(p + kClustersPerGroup, sb.blocks_per_group);
  store_le<std::uint32_t>(p + kInodesPerGroup, sb.inodes_per_group);
  store_le<std::uint32_t>(p + kMtime, sb.mount_time);
  store_le<std::uint32_t>(p + kWtime, sb.write_time);
  store_le<std::uint16_t>(p + kMaxMntCount, 0xFFFF);  // -1: no forced checks
  store_le<std::uint16_t>(p + kMagic, kSuperMagic);
  store_le<std::uint16_t>(p + kState, sb.state);
  store_le<std::uint16_t>(p + kErrors, sb.errors);
  store_le<std::uint32_t>(p + kLastCheck, sb.last_check);
  store_le<std::uint32_t>(p + kRevLevel, sb.rev_level);
  store_le<std::uint32_t>(p + sb::kFirstIno, sb.first_ino);
  store_le<std::uint16_t>(p + kInodeSize, sb.inode_size);
  store_le<std::uint16_t>(p + kBlockGroupNr, sb.block_group_nr);
  store_le<std::uint32_t>(p + kFeatureCompat, sb.feature_compat);
  store_le<std::uint32_t>(p + kFeatureIncompat, sb.feature_incompat);
  store_le<std::uint32_t>(p + kFeatureRoCompat, sb.feature_ro_compat);
  std::memcpy(p + kUuid, sb.uuid.data(), 16);
  std::memcpy(p + kVolumeName, sb.volume_name.data(), std::min<std::size_t>(sb.volume_name.size(), 16));
  std::memcpy(p + kJournalUuid, sb.journal_uuid.data(), 16);
  store_le<std::uint32_t>(p + kJournalInum, sb.journal_inum);
  store_le<std::uint32_t>(p + kJournalDev, sb.journal_dev);
  store_le<std::uint32_t>(p + kLastOrphan, sb.last_orphan);
  for (std::size_t i = 0; i < 4; ++i) store_le<std::uint32_t>(p + kHashSeed + 4 * i, sb.hash_seed[i]);
  p[kDefHashVersion] = sb.def_hash_version;
  p[kJnlBackupType] = sb.jnl_backup_type;
  store_le<std::uint16_t>(p + kDescSize, sb.desc_size);
  store_le<std::uint32_t>(p + kDefaultMountOpts, sb.default_mount_opts);
  store_le<std::uint32_t>(p + kMkfsTime, sb.mkfs_time);
  for (std::size_t i = 0; i < 17; ++i) store_le<std::uint32_t>(p + kJnlBlocks + 4 * i, sb.jnl_blocks[i]);
  if (is64) {
    store_le<std::uint32_t>(p + kBlocksCountHi, hi32(sb.blocks_count));
    store_le<std::uint32_t>(p + kRBlocksCountHi, hi32(sb.reserved_blocks));
    store_le<std::uint32_t>(p + kFreeBlocksHi, hi32(sb.free_blocks));
  }
  store_le<std::uint16_t>(p + kMinExtraIsize, sb.min_extra_isize);
  store_le<std::uint16_t>(p + kWantExtraIsize, sb.want_extra_isize);
  store_le<std::uint32_t>(p + kFlags, sb.flags);
  p[kLogGroupsPerFlex] = sb.log_groups_per_flex;
  p[kChecksumType] = sb.checksum_type;
  if ((sb.feature_incompat & incompat::kCsumSeed) != 0) store_le<std::uint32_t>(p + kChecksumSeed, sb.checksum_seed);
  if (sb.has_metadata_csum()) store_le<std::uint32_t>(p + kChecksum, superblock_checksum(out));
}

Superblock decode_superblock(std::span<const std::uint8_t, 1024> in) {
  const std::uint8_t* p = in.data();
  Superblock sb;
  sb.magic = load_le<std::uint16_t>(p + kMagic);
  if (sb.magic != kSuperMagic) bad_superblock("no ext2/3/4 magic number (not an ext4 filesystem)");
  sb.feature_compat = load_le<std::uint32_t>(p + kFeatureCompat);
  sb.feature_incompat = load_le<std::uint32_t>(p + kFeatureIncompat);
  sb.feature_ro_compat = load_le<std::uint32_t>(p + kFeatureRoCompat);
  sb.checksum_type = p[kChecksumType];
  if (sb.has_metadata_csum()) {
    if (sb.checksum_type != 1) bad_superblock("unknown checksum type " + std::to_string(sb.checksum_type));
    if (load_le<std::uint32_t>(p + kChecksum) != superblock_checksum(in)) bad_superblock("checksum does not match");
  }
  const bool is64 = (sb.feature_incompat & incompat::k64bit) != 0;
  sb.inodes_count = load_le<std::uint32_t>(p + kInodesCount);
  sb.blocks_count = load_le<std::uint32_t>(p + kBlocksCountLo);
  sb.reserved_blocks = load_le<std::uint32_t>(p + kRBlocksCountLo);
  sb.free_blocks = load_le<std::uint32_t>(p + kFreeBlocksLo);
  if (is64) {
    sb.blocks_count |= std::uint64_t{load_le<std::uint32_t>(p + kBlocksCountHi)} << 32;
    sb.reserved_blocks |= std::uint64_t{load_le<std::uint32_t>(p + kRBlocksCountHi)} << 32;
    sb.free_blocks |= std::uint64_t{load_le<std::uint32_t>(p + kFreeBlocksHi)} << 32;
  }
  sb.free_inodes = load_le<std::uint32_t>(p + kFreeInodes);
  sb.first_data_block = load_le<std::uint32_t>(p + kFirstDataBlock);
  sb.log_block_size = load_le<std::uint32_t>(p + kLogBlockSize);
  sb.blocks_per_group = load_le<std::uint32_t>(p + kBlocksPerGroup);
  sb.inodes_per_group = load_le<std::uint32_t>(p + kInodesPerGroup);
  sb.mount_time = load_le<std::uint32_t>(p + kMtime);
  sb.write_time = load_le<std::uint32_t>(p + kWtime);
  sb.state = load_le<std::uint16_t>(p + kState);
  sb.errors = load_le<std::uint16_t>(p + kErrors);
  sb.last_check = load_le<std::uint32_t>(p + kLastCheck);
  sb.rev_level = load_le<std::uint32_t>(p + kRevLevel);
  sb.first_ino = load_le<std::uint32_t>(p + sb::kFirstIno);
  sb.inode_size = load_le<std::uint16_t>(p + kInodeSize);
  sb.block_group_nr = load_le<std::uint16_t>(p + kBlockGroupNr);
  std::memcpy(sb.uuid.data(), p + kUuid, 16);
  const char* name = reinterpret_cast<const char*>(p + kVolumeName);
  sb.volume_name.assign(name, strnlen(name, 16));
  std::memcpy(sb.journal_uuid.data(), p + kJournalUuid, 16);
  sb.journal_inum = load_le<std::uint32_t>(p + kJournalInum);
  sb.journal_dev = load_le<std::uint32_t>(p + kJournalDev);
  for (std::size_t i = 0; i < 4; ++i) sb.hash_seed[i] = load_le<std::uint32_t>(p + kHashSeed + 4 * i);
  sb.def_hash_version = p[kDefHashVersion];
  sb.jnl_backup_type = p[kJnlBackupType];
  sb.desc_size = load_le<std::uint16_t>(p + kDescSize);
  sb.default_mount_opts = load_le<std::uint32_t>(p + kDefaultMountOpts);
  sb.mkfs_time = load_le<std::uint32_t>(p + kMkfsTime);
  for (std::size_t i = 0; i < 17; ++i) sb.jnl_blocks[i] = load_le<std::uint32_t>(p + kJnlBlocks + 4 * i);
  sb.min_extra_isize = load_le<std::uint16_t>(p + kMinExtraIsize);
  sb.want_extra_isize = load_le<std::uint16_t>(p + kWantExtraIsize);
  sb.flags = load_le<std::uint32_t>(p + kFlags);
  sb.log_groups_per_flex = p[kLogGroupsPerFlex];
  sb.checksum_seed = load_le<std::uint32_t>(p + kChecksumSeed);
  sb.last_orphan = load_le<std::uint32_t>(p + kLastOrphan);

  // Sanity: what the reader later divides by or multiplies with.
  if (sb.rev_level < 1) bad_superblock("revision 0 (ext2 of 1994) is not supported");
  if (sb.log_block_size > 6) bad_superblock("block size 2^" + std::to_string(10 + sb.log_block_size) + " is out of range");
  const std::uint32_t bs = sb.block_size();
  if ((sb.feature_incompat & incompat::kJournalDev) != 0) return sb;  // an external journal: no groups
  if (sb.blocks_per_group == 0 || sb.blocks_per_group > 8 * bs) bad_superblock("blocks per group out of range");
  if (sb.inodes_per_group == 0 || sb.inodes_per_group > 8 * bs) bad_superblock("inodes per group out of range");
  if (sb.inode_size < 128 || sb.inode_size > bs || (sb.inode_size & (sb.inode_size - 1)) != 0)
    bad_superblock("inode size " + std::to_string(sb.inode_size) + " is not a power of two from 128 to the block size");
  if (sb.first_data_block != (bs == 1024 ? 1u : 0u)) bad_superblock("first data block does not fit the block size");
  if (sb.blocks_count <= sb.first_data_block) bad_superblock("no blocks");
  if (is64 && (sb.desc_size < 32 || sb.desc_size > 1024 || (sb.desc_size & (sb.desc_size - 1)) != 0))
    bad_superblock("group descriptor size " + std::to_string(sb.desc_size) + " is out of range");
  const std::uint64_t groups = (sb.blocks_count - sb.first_data_block + sb.blocks_per_group - 1) / sb.blocks_per_group;
  if (groups * sb.inodes_per_group != sb.inodes_count) bad_superblock("inode count does not match the groups");
  return sb;
}

}  // namespace fscore::ext4
