// SPDX-License-Identifier: BSD-3-Clause
// ImageBuilder::finish: everything written once the tree is complete.
#include <algorithm>

#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/superblock.h"
#include "fscore/jbd2/journal_superblock.h"

namespace fscore::ext4 {
namespace {

constexpr std::uint32_t kLostFoundBytes = 16384;  // mke2fs grows lost+found to 16 KiB,
constexpr std::uint32_t kLostFoundMaxBlocks = 12; // within the direct blocks

void set_bits(std::span<std::uint8_t> bitmap, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t i = from; i < to; ++i) bitmap[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
}

}  // namespace

ImageLayout ImageBuilder::finish() {
  if (finished_) throw std::logic_error("image builder: finish twice");
  write_directories();
  finished_ = true;
  write_journal_superblock();
  write_inode_tables();
  write_group_metadata();
  write_superblocks();
  ImageLayout layout;
  layout.geometry = geometry_;
  layout.journal = options_.journal;
  layout.journal_runs = journal_runs_;
  layout.used_blocks = geometry_.blocks - geometry_.first_data_block - map_.free_blocks();
  layout.used_inodes = inodes_.size();
  layout.free_runs = map_.free_runs();
  return layout;
}

void ImageBuilder::write_directories() {
  const std::uint32_t bs = geometry_.block_size;
  std::vector<std::uint32_t> order;
  order.reserve(directories_.size());
  for (const auto& [ino, dir] : directories_) order.push_back(ino);
  std::sort(order.begin(), order.end());
  for (const std::uint32_t ino : order) {
    Directory& dir = directories_[ino];
    const std::uint32_t links = 2 + dir.subdirs;
    Inode& n = inodes_[ino - 1];
    std::vector<DirEntry> entries;
    entries.reserve(dir.entries.size() + 2);
    entries.push_back({ino, FileType::kDirectory, "."});
    entries.push_back({dir.parent, FileType::kDirectory, ".."});
    std::move(dir.entries.begin(), dir.entries.end(), std::back_inserter(entries));
    dir = Directory{};
    std::vector<std::vector<std::uint8_t>> blocks = pack_directory(entries, bs, ino, n.generation, csum_seed_);
    if (ino == kFirstIno) {  // lost+found: room to reconnect files without allocating
      const std::size_t want = std::min(kLostFoundMaxBlocks, kLostFoundBytes / bs);
      while (blocks.size() < want) blocks.push_back(empty_directory_block(bs, ino, n.generation, csum_seed_));
    }
    const std::vector<Extent> extents = allocate_extents(0, blocks.size());
    std::size_t next = 0;
    for (const Extent& x : extents) {
      for (std::uint32_t i = 0; i < x.length; ++i) write(x.physical + i, blocks[next++]);
    }
    n.size = std::uint64_t{blocks.size()} * bs;
    set_extents(ino, extents, blocks.size());
    n.links = static_cast<std::uint16_t>(links > kLinkMax ? 1 : links);
  }
}

void ImageBuilder::write_journal_superblock() {
  if (options_.journal != JournalKind::kInternal) return;
  jbd2::JournalSuperblock jsb;
  jsb.block_size = geometry_.block_size;
  std::uint64_t blocks = 0;
  for (const BlockRun& r : journal_runs_) blocks += r.count;
  jsb.maxlen = static_cast<std::uint32_t>(blocks);
  jsb.first = 1;
  jsb.sequence = 1;
  jsb.uuid = options_.uuid;
  jsb.nr_users = 1;
  std::vector<std::uint8_t> block(geometry_.block_size, 0);
  encode_journal_superblock(jsb, std::span<std::uint8_t, jbd2::kSuperblockSize>(block.data(), jbd2::kSuperblockSize));
  write(journal_runs_.front().start, block);
}

void ImageBuilder::write_inode_tables() {
  const Geometry& g = geometry_;
  const std::uint64_t used = inodes_.size();
  std::vector<std::uint8_t> table;
  for (std::uint32_t group = 0; std::uint64_t{group} * g.inodes_per_group < used; ++group) {
    const std::uint64_t first = std::uint64_t{group} * g.inodes_per_group;  // index of its first inode
    const std::uint64_t count = std::min<std::uint64_t>(g.inodes_per_group, used - first);
    const std::uint64_t bytes = (count * g.inode_size + g.block_size - 1) / g.block_size * g.block_size;
    table.assign(bytes, 0);
    for (std::uint64_t i = 0; i < count; ++i) {
      const Inode& n = inodes_[first + i];
      if (n.mode == 0) continue;  // an unused reserved inode stays zero
      const auto ino = static_cast<std::uint32_t>(first + i + 1);
      encode_inode(n, ino, csum_seed_, std::span(table).subspan(i * g.inode_size, g.inode_size));
    }
    write(inode_table_[group], table);
  }
}

void ImageBuilder::write_group_metadata() {
  const Geometry& g = geometry_;
  const std::uint32_t bs = g.block_size;
  const std::uint64_t used_inodes = inodes_.size();
  std::vector<std::uint32_t> dirs_per_group(g.groups, 0);
  for (std::uint64_t i = 0; i < used_inodes; ++i)
    if ((inodes_[i].mode & kModeTypeMask) == kModeDir) ++dirs_per_group[i / g.inodes_per_group];

  std::vector<std::uint8_t> descs(std::uint64_t{g.desc_blocks} * bs, 0);
  std::vector<std::uint8_t> bitmap(bs);
  for (std::uint32_t group = 0; group < g.groups; ++group) {
    const std::uint64_t first = g.group_first_block(group);
    const std::uint64_t blocks = g.group_blocks(group);
    const std::uint64_t used_blocks = map_.used_in(first, first + blocks);
    const std::uint64_t base = g.has_super(group) ? 1 + g.desc_blocks : 0;
    const std::uint64_t first_inode = std::uint64_t{group} * g.inodes_per_group;
    const std::uint32_t inodes =
        used_inodes > first_inode ? static_cast<std::uint32_t>(std::min<std::uint64_t>(g.inodes_per_group, used_inodes - first_inode)) : 0;

    GroupDesc d;
    d.block_bitmap = block_bitmap_[group];
    d.inode_bitmap = inode_bitmap_[group];
    d.inode_table = inode_table_[group];
    d.free_blocks = static_cast<std::uint32_t>(blocks - used_blocks);
    d.free_inodes = g.inodes_per_group - inodes;
    d.used_dirs = dirs_per_group[group];
    d.itable_unused = g.inodes_per_group - inodes;
    d.flags = kBgInodeZeroed;
    // A group holding nothing but its own superblock copy can be left for
    // the kernel to initialize; the last group never is (as mke2fs does).
    if (group != 0 && group + 1 != g.groups && used_blocks == base) d.flags |= kBgBlockUninit;
    if (inodes == 0) d.flags |= kBgInodeUninit;

    if ((d.flags & kBgBlockUninit) == 0) {
      std::fill(bitmap.begin(), bitmap.end(), std::uint8_t{0});
      map_.render(first, blocks, bitmap);
      set_bits(bitmap, blocks, std::uint64_t{8} * bs);  // past the end of the last group
      d.block_bitmap_csum = bitmap_checksum(csum_seed_, std::span(bitmap).first(g.blocks_per_group / 8));
      write(d.block_bitmap, bitmap);
    }
    if ((d.flags & kBgInodeUninit) == 0) {
      std::fill(bitmap.begin(), bitmap.end(), std::uint8_t{0});
      set_bits(bitmap, 0, inodes);
      set_bits(bitmap, g.inodes_per_group, std::uint64_t{8} * bs);
      d.inode_bitmap_csum = bitmap_checksum(csum_seed_, std::span(bitmap).first(g.inodes_per_group / 8));
      write(d.inode_bitmap, bitmap);
    }
    encode_group_desc(d, group, csum_seed_, true, std::span(descs).subspan(std::uint64_t{group} * g.desc_size, g.desc_size));
  }
  for (std::uint32_t group = 0; group < g.groups; ++group)
    if (g.has_super(group)) write(g.group_first_block(group) + 1, descs);
}

void ImageBuilder::write_superblocks() {
  const Geometry& g = geometry_;
  Superblock sb;
  sb.inodes_count = static_cast<std::uint32_t>(g.inodes);
  sb.blocks_count = g.blocks;
  sb.reserved_blocks = g.blocks * 5 / 100;
  sb.free_blocks = map_.free_blocks();
  sb.free_inodes = static_cast<std::uint32_t>(g.inodes - inodes_.size());
  sb.first_data_block = g.first_data_block;
  sb.log_block_size = static_cast<std::uint32_t>(std::countr_zero(g.block_size) - 10);
  sb.blocks_per_group = g.blocks_per_group;
  sb.inodes_per_group = g.inodes_per_group;
  const auto now = static_cast<std::uint32_t>(options_.now.sec);
  sb.write_time = sb.last_check = sb.mkfs_time = now;
  sb.first_ino = kFirstIno;
  sb.inode_size = static_cast<std::uint16_t>(g.inode_size);
  sb.feature_compat = kDefaultCompat;
  sb.feature_incompat = kDefaultIncompat;
  sb.feature_ro_compat = kDefaultRoCompat;
  sb.uuid = options_.uuid;
  sb.volume_name = options_.label;
  if (options_.journal != JournalKind::kNone) sb.feature_compat |= compat::kHasJournal;
  if (options_.journal == JournalKind::kInternal) {
    sb.journal_inum = kJournalIno;
    sb.jnl_backup_type = 1;  // EXT3_JNL_BACKUP_BLOCKS: i_block and i_size
    const Inode& j = inodes_[kJournalIno - 1];
    for (std::size_t i = 0; i < 15; ++i) sb.jnl_blocks[i] = load_le<std::uint32_t>(j.block.data() + 4 * i);
    sb.jnl_blocks[15] = static_cast<std::uint32_t>(j.size >> 32);
    sb.jnl_blocks[16] = static_cast<std::uint32_t>(j.size);
  } else if (options_.journal == JournalKind::kExternal) {
    sb.journal_uuid = options_.external_journal_uuid;
  }
  for (std::size_t i = 0; i < 4; ++i) sb.hash_seed[i] = load_le<std::uint32_t>(options_.hash_seed.data() + 4 * i);
  sb.def_hash_version = 1;  // half_md4
  sb.desc_size = static_cast<std::uint16_t>(g.desc_size);
  sb.default_mount_opts = kMountOptsUserXattrAcl;
  sb.min_extra_isize = sb.want_extra_isize = kExtraIsize;
  sb.flags = kFlagsSignedHash;
  sb.log_groups_per_flex = static_cast<std::uint8_t>(std::countr_zero(g.flex_bg_size));
  sb.checksum_type = 1;  // crc32c

  std::vector<std::uint8_t> bytes(kSuperSize);
  std::span<std::uint8_t, kSuperSize> out(bytes.data(), kSuperSize);
  for (std::uint32_t group = 0; group < g.groups; ++group) {
    if (!g.has_super(group)) continue;
    sb.block_group_nr = static_cast<std::uint16_t>(group);
    encode_superblock(sb, out);
    if (sink_ == nullptr) continue;
    // The primary copy sits at byte 1024 whatever the block size; backups
    // start their group's first block.
    sink_->write(group == 0 ? kSuperOffset : g.group_first_block(group) * g.block_size, bytes);
  }
}

}  // namespace fscore::ext4
