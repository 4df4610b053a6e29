// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/image_reader.h"

#include <stdexcept>
#include <string>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/indirect_blocks.h"
#include "fscore/ext4/inode.h"

namespace fscore::ext4 {
namespace {

constexpr std::size_t kMaxJournalExtents = 1 << 16;  // 2^16 x 32768 blocks: more than any journal
constexpr std::uint64_t kMaxJournalBlocksRead = 1u << 25;  // well above mke2fs's 10,240,000

[[noreturn]] void bad_image(const std::string& what) { throw std::runtime_error(what); }

jbd2::JournalSuperblock read_journal_super(const BlockSource& source, std::uint64_t block, std::uint32_t bs) {
  std::vector<std::uint8_t> bytes(jbd2::kSuperblockSize);
  source.read(block * bs, bytes);
  auto jsb = jbd2::decode_journal_superblock(std::span<const std::uint8_t, jbd2::kSuperblockSize>(bytes.data(), bytes.size()));
  if (jsb.block_size != bs)
    bad_image("journal block size " + std::to_string(jsb.block_size) + " differs from the filesystem's " + std::to_string(bs));
  return jsb;
}

void read_internal_journal(const BlockSource& source, ImageInfo& info) {
  const std::uint32_t bs = info.block_size;
  const Inode j = read_inode(source, info, info.super.journal_inum);
  if ((j.mode & kModeTypeMask) != kModeRegular) bad_image("journal inode is not a regular file");
  const std::uint64_t file_blocks = (j.size + bs - 1) / bs;
  if (file_blocks > kMaxJournalBlocksRead) bad_image("journal inode of " + std::to_string(j.size) + " bytes is larger than jbd2 takes");
  info.journal_root = j.block;
  info.journal_extents = (j.flags & kExtentsFl) != 0;
  const std::vector<Extent> extents =
      (j.flags & kExtentsFl) != 0
          ? read_extent_tree(j.block, source, bs, info.blocks, kMaxJournalExtents,
                             info.super.has_metadata_csum()
                                 ? std::optional<std::uint32_t>(
                                       inode_csum_seed(info.super.csum_seed(), info.super.journal_inum, j.generation))
                                 : std::nullopt)
                                  : read_indirect_blocks(j.block, source, bs, info.blocks, file_blocks, kMaxJournalBlocksRead,
                                                         kMaxJournalExtents);
  std::uint64_t logical = 0;
  for (const Extent& x : extents) {
    if (x.logical != logical) bad_image("journal inode has a hole at block " + std::to_string(logical));
    if (!info.journal_runs.empty() && info.journal_runs.back().start + info.journal_runs.back().count == x.physical) {
      info.journal_runs.back().count += x.length;
    } else {
      info.journal_runs.push_back({x.physical, x.length});
    }
    logical += x.length;
  }
  if (logical == 0) bad_image("journal inode has no blocks");
  if (j.size != logical * bs) bad_image("journal inode size does not match its blocks");
  info.journal_superblock_block = info.journal_runs.front().start;
  info.journal_super = read_journal_super(source, info.journal_superblock_block, bs);
  if (info.journal_super.maxlen > logical) bad_image("jbd2 superblock says the journal is longer than its inode");
}

}  // namespace

GroupDesc read_group_desc(const BlockSource& source, const ImageInfo& info, std::uint32_t group) {
  const Superblock& sb = info.super;
  const std::uint32_t bs = info.block_size;
  const bool is64 = (sb.feature_incompat & incompat::k64bit) != 0;
  const std::uint32_t desc_size = is64 ? sb.desc_size : 32;
  if (desc_size < 32) bad_image("group descriptors of " + std::to_string(desc_size) + " bytes");
  const std::uint64_t desc_offset = (std::uint64_t{sb.first_data_block} + 1) * bs + std::uint64_t{group} * desc_size;
  if (desc_offset + desc_size > info.blocks * bs) bad_image("group descriptor " + std::to_string(group) + " outside the filesystem");
  std::vector<std::uint8_t> desc(desc_size);
  source.read(desc_offset, desc);
  if (sb.has_metadata_csum() && !group_desc_checksum_ok(desc, group, sb.csum_seed()))
    bad_image("group descriptor " + std::to_string(group) + ": checksum does not match");
  return decode_group_desc(desc);
}

Inode read_inode(const BlockSource& source, const ImageInfo& info, std::uint32_t ino) {
  return decode_inode(read_inode_bytes(source, info, ino));
}

std::vector<std::uint8_t> read_inode_bytes(const BlockSource& source, const ImageInfo& info, std::uint32_t ino) {
  const Superblock& sb = info.super;
  const std::uint32_t bs = info.block_size;
  if (ino < 1 || ino > sb.inodes_count) bad_image("inode " + std::to_string(ino) + " does not exist");
  if (sb.inodes_per_group == 0 || sb.inode_size < 128) bad_image("the superblock's inode geometry is broken");
  const std::uint32_t group = (ino - 1) / sb.inodes_per_group;
  const std::uint32_t index = (ino - 1) % sb.inodes_per_group;
  const GroupDesc d = read_group_desc(source, info, group);
  const std::uint64_t table_blocks = (std::uint64_t{sb.inodes_per_group} * sb.inode_size + bs - 1) / bs;
  if (d.inode_table < 1 || d.inode_table >= info.blocks || table_blocks > info.blocks - d.inode_table)
    bad_image("group " + std::to_string(group) + ": inode table outside the filesystem");
  std::vector<std::uint8_t> raw(sb.inode_size);
  source.read(d.inode_table * bs + std::uint64_t{index} * sb.inode_size, raw);
  if (sb.has_metadata_csum() && !inode_checksum_ok(raw, ino, sb.csum_seed()))
    bad_image("inode " + std::to_string(ino) + ": checksum does not match");
  return raw;
}

bool has_ext4_magic(const BlockSource& source) {
  if (source.size() < kSuperOffset + kSuperSize) return false;
  std::uint8_t magic[2];
  source.read(kSuperOffset + sb::kMagic, magic);
  return load_le<std::uint16_t>(magic) == kSuperMagic;
}

ImageInfo read_image(const BlockSource& source) {
  if (source.size() < kSuperOffset + kSuperSize) bad_image("too small to hold an ext4 superblock");
  std::vector<std::uint8_t> bytes(kSuperSize);
  source.read(kSuperOffset, bytes);
  ImageInfo info;
  info.super = decode_superblock(std::span<const std::uint8_t, kSuperSize>(bytes.data(), kSuperSize));
  info.block_size = info.super.block_size();
  info.blocks = info.super.blocks_count;
  if (info.blocks > source.size() / info.block_size)
    bad_image("the filesystem has " + std::to_string(info.blocks) + " blocks of " + std::to_string(info.block_size) +
         " bytes, more than the device holds");
  if ((info.super.feature_incompat & incompat::kJournalDev) != 0) {
    info.journal_device = true;
    info.journal_superblock_block = kSuperOffset / info.block_size + 1;
    if (info.journal_superblock_block >= info.blocks) bad_image("journal device too small for its jbd2 superblock");
    info.journal_super = read_journal_super(source, info.journal_superblock_block, info.block_size);
    if (info.journal_super.maxlen > info.blocks) bad_image("jbd2 superblock says the journal is longer than the device");
    return info;
  }
  if ((info.super.feature_compat & compat::kHasJournal) == 0) return info;
  if (info.super.journal_inum != 0) {
    info.journal = JournalKind::kInternal;
    read_internal_journal(source, info);
  } else if (!is_nil(info.super.journal_uuid)) {
    info.journal = JournalKind::kExternal;
  } else {
    bad_image("has_journal without a journal inode or a journal uuid");
  }
  return info;
}

}  // namespace fscore::ext4
