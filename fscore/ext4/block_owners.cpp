// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/block_owners.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <stdexcept>

#include "fscore/endian.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/geometry.h"
#include "fscore/ext4/indirect_blocks.h"
#include "fscore/ext4/tree_reader.h"
#include "fscore/ext4/xattr.h"

namespace fscore::ext4 {
namespace {

// An extent tree's header and entries (Documentation/filesystems/ext4/ifork.rst).
constexpr std::size_t kExtentHeaderBytes = 12, kExtentEntryBytes = 12;
constexpr unsigned kMaxTreeDepth = 5;  // EXT4_MAX_EXTENT_DEPTH
// Extent tree blocks read for all inodes together: far more than the lab's
// images hold (a 4 GiB file in 4 KiB extents needs about 3000), and a bound
// on the time a crafted image can take.
constexpr std::uint64_t kMaxTreeNodes = std::uint64_t{1} << 18;
constexpr std::uint32_t kInitMaxLength = 32768;  // longer: an unwritten extent of length - 32768
constexpr std::uint64_t kMaxGroups = std::uint64_t{1} << 20;  // 128 TiB at 4 KiB blocks

struct Walk {
  const BlockSource& source;
  std::uint32_t block_size;
  std::uint64_t blocks;
  std::uint32_t ino;
  std::vector<BlockOwner>& out;
  BlockKind data_kind;
  std::uint64_t& nodes;  // tree blocks read so far, for every inode: at most kMaxTreeNodes

  // The node `bytes` (the root in i_block, or a tree block) at `depth`.
  void node(std::span<const std::uint8_t> bytes, unsigned depth) {
    if (bytes.size() < kExtentHeaderBytes || load_le<std::uint16_t>(bytes.data()) != kExtentMagic) return;
    const std::uint16_t entries = load_le<std::uint16_t>(bytes.data() + 2);
    if (load_le<std::uint16_t>(bytes.data() + 6) != depth || depth > kMaxTreeDepth) return;
    for (std::size_t i = 0; i < entries; ++i) {
      const std::size_t at = kExtentHeaderBytes + i * kExtentEntryBytes;
      if (at + kExtentEntryBytes > bytes.size()) return;
      const std::uint8_t* e = bytes.data() + at;
      if (depth == 0) {
        std::uint32_t length = load_le<std::uint16_t>(e + 4);
        const bool unwritten = length > kInitMaxLength;
        if (unwritten) length -= kInitMaxLength;
        const std::uint64_t start = std::uint64_t{load_le<std::uint16_t>(e + 6)} << 32 | load_le<std::uint32_t>(e + 8);
        if (length == 0 || start >= blocks || length > blocks - start) continue;
        BlockOwner o;
        o.start = start;
        o.count = length;
        o.kind = data_kind;
        o.ino = ino;
        o.file_block = load_le<std::uint32_t>(e);
        o.unwritten = unwritten;
        out.push_back(o);
        continue;
      }
      const std::uint64_t child = std::uint64_t{load_le<std::uint16_t>(e + 8)} << 32 | load_le<std::uint32_t>(e + 4);
      if (child >= blocks || ++nodes > kMaxTreeNodes) continue;
      BlockOwner o;
      o.start = child;
      o.count = 1;
      o.kind = BlockKind::extent_tree;
      o.ino = ino;
      out.push_back(o);
      std::vector<std::uint8_t> block(block_size);
      source.read(child * block_size, block);
      node(block, depth - 1);
    }
  }
};

bool sparse_super_has(const ImageInfo& info, std::uint32_t group) {
  if ((info.super.feature_ro_compat & ro_compat::kSparseSuper) == 0) return true;
  Geometry g;
  return g.has_super(group);
}

}  // namespace

const char* to_string(BlockKind kind) {
  switch (kind) {
    case BlockKind::superblock: return "superblock";
    case BlockKind::group_descriptors: return "group descriptors";
    case BlockKind::block_bitmap: return "block bitmap";
    case BlockKind::inode_bitmap: return "inode bitmap";
    case BlockKind::inode_table: return "inode table";
    case BlockKind::journal: return "journal";
    case BlockKind::extent_tree: return "extent tree";
    case BlockKind::block_map: return "block map";
    case BlockKind::directory: return "directory";
    case BlockKind::file: return "file data";
    case BlockKind::symlink: return "symlink target";
    case BlockKind::xattr: return "xattr block";
    case BlockKind::other: return "other";
  }
  return "other";
}

BlockOwners BlockOwners::read(const BlockSource& source, std::uint64_t max_inodes) {
  BlockOwners o;
  o.info_ = read_image(source);
  const ImageInfo& info = o.info_;
  const Superblock& sb = info.super;
  const std::uint32_t bs = info.block_size;
  std::vector<BlockOwner>& out = o.owners_;
  const auto add = [&](BlockKind kind, std::uint64_t start, std::uint64_t count, std::uint32_t group, std::uint32_t ino,
                       std::uint64_t file_block = 0) {
    if (count == 0 || start >= info.blocks) return;
    BlockOwner b;
    b.start = start;
    b.count = std::min(count, info.blocks - start);
    b.kind = kind;
    b.group = group;
    b.ino = ino;
    b.file_block = file_block;
    out.push_back(b);
  };
  if (sb.blocks_per_group == 0 || sb.inodes_per_group == 0 || sb.inode_size == 0 || info.blocks <= sb.first_data_block)
    throw std::runtime_error("the superblock's geometry is not one a filesystem has (no blocks or inodes per group)");
  const std::uint64_t groups = (info.blocks - sb.first_data_block + sb.blocks_per_group - 1) / sb.blocks_per_group;
  if (groups > kMaxGroups) throw std::runtime_error("the superblock says " + std::to_string(groups) + " groups: more than an image here has");
  const bool bit64 = (sb.feature_incompat & incompat::k64bit) != 0 && sb.desc_size >= 64;
  const std::uint64_t desc_blocks = (groups * (bit64 ? sb.desc_size : 32) + bs - 1) / bs;
  const std::uint64_t table_blocks = (std::uint64_t{sb.inodes_per_group} * sb.inode_size + bs - 1) / bs;
  const bool meta_bg = (sb.feature_incompat & incompat::kMetaBg) != 0;
  std::vector<std::uint32_t> used;  // inodes whose bit is set
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::uint64_t first = sb.first_data_block + std::uint64_t{g} * sb.blocks_per_group;
    if (sparse_super_has(info, g)) {
      // The superblock is in the group's first block (bytes 1024..2047 of
      // block 0 with bigger blocks); its descriptor table follows.
      add(BlockKind::superblock, first, 1, g, 0);
      if (!meta_bg) add(BlockKind::group_descriptors, first + 1, desc_blocks, g, 0);
    }
    GroupDesc d;
    try {
      d = read_group_desc(source, info, g);
    } catch (const std::runtime_error&) {
      continue;  // a descriptor that does not read owns nothing we can tell
    }
    add(BlockKind::block_bitmap, d.block_bitmap, 1, g, 0);
    add(BlockKind::inode_bitmap, d.inode_bitmap, 1, g, 0);
    add(BlockKind::inode_table, d.inode_table, table_blocks, g, g * sb.inodes_per_group + 1);
    if ((d.flags & kBgInodeUninit) != 0 || d.inode_bitmap >= info.blocks) continue;
    std::vector<std::uint8_t> bitmap(bs);
    source.read(d.inode_bitmap * bs, bitmap);
    for (std::uint32_t i = 0; i < sb.inodes_per_group && i / 8 < bs; ++i)
      if ((bitmap[i / 8] >> (i % 8) & 1) != 0 && used.size() < max_inodes) used.push_back(g * sb.inodes_per_group + i + 1);
  }
  std::uint64_t log_block = 0;
  for (const BlockRun& run : info.journal_runs) {
    add(BlockKind::journal, run.start, run.count, 0, kJournalIno, log_block);
    log_block += run.count;
  }
  std::uint64_t tree_nodes = 0;
  for (const std::uint32_t ino : used) {
    if (ino == kJournalIno && !info.journal_runs.empty()) continue;
    std::vector<std::uint8_t> raw;
    Inode inode;
    try {
      raw = read_inode_bytes(source, info, ino);
      inode = read_inode(source, info, ino);
    } catch (const std::runtime_error&) {
      continue;
    }
    if (inode.mode == 0) continue;
    const std::uint16_t type = inode.mode & kModeTypeMask;
    const BlockKind kind = type == kModeDir ? BlockKind::directory
                           : type == kModeRegular && ino >= sb.first_ino ? BlockKind::file
                           : type == kModeSymlink ? BlockKind::symlink
                                                  : BlockKind::other;
    const std::uint64_t xattr = inode_xattr_block(raw);
    if (xattr != 0) add(BlockKind::xattr, xattr, 1, 0, ino);
    // What i_blocks counts beyond the xattr block is the inode's data: none
    // for a fast symlink (its target in i_block) or a device's inode.
    const std::uint64_t data_512 = inode.blocks_512 - std::min<std::uint64_t>(inode.blocks_512, xattr != 0 ? bs / 512 : 0);
    const bool has_blocks = type == kModeDir || type == kModeRegular || (type == kModeSymlink && data_512 != 0);
    if ((inode.flags & kExtentsFl) != 0) {
      Walk walk{source, bs, info.blocks, ino, out, kind, tree_nodes};
      walk.node(inode.block, load_le<std::uint16_t>(inode.block.data() + 6));
    } else if (has_blocks && data_512 != 0) {
      // A block map: its direct blocks' data and its top indirect blocks.
      try {
        const std::uint64_t file_blocks = (inode.size + bs - 1) / bs;
        for (const Extent& e : read_indirect_blocks(inode.block, source, bs, info.blocks, file_blocks, info.blocks))
          add(kind, e.physical, e.length, 0, ino, e.logical);
      } catch (const std::runtime_error&) {
        // A broken map: its direct blocks are what we can tell.
      }
      for (std::size_t k = 12; k < 15; ++k)
        if (const std::uint32_t b = load_le<std::uint32_t>(inode.block.data() + 4 * k); b != 0)
          add(BlockKind::block_map, b, 1, 0, ino);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const BlockOwner& a, const BlockOwner& b) { return a.start < b.start; });
  std::uint64_t reach = 0;
  for (const BlockOwner& b : out) o.reach_.push_back(reach = std::max(reach, b.start + b.count));

  // Names: a walk of the directory tree from the root, each inode named by
  // the first path that reaches it.
  try {
    const TreeReader tree(source);
    std::deque<std::pair<TreeReader::Found, std::string>> todo;
    if (auto root = tree.lookup("")) todo.emplace_back(*root, "");
    o.paths_[kRootIno] = "";
    std::set<std::uint32_t> seen{kRootIno};
    while (!todo.empty() && seen.size() < max_inodes) {
      const auto [dir, path] = todo.front();
      todo.pop_front();
      std::vector<DirEntry> entries;
      try {
        entries = tree.entries(dir);
      } catch (const std::runtime_error&) {
        continue;
      }
      for (const DirEntry& e : entries) {
        if (!seen.insert(e.ino).second) continue;
        const std::string child = path.empty() ? e.name : path + "/" + e.name;
        o.paths_[e.ino] = child;
        if (e.type != FileType::kDirectory) continue;
        try {
          todo.emplace_back(TreeReader::Found{e.ino, read_inode(source, info, e.ino)}, child);
        } catch (const std::runtime_error&) {
          // A directory that does not read: its names stay unknown.
        }
      }
    }
  } catch (const std::runtime_error&) {
    // No root: no names.
  }
  return o;
}

const BlockOwner* BlockOwners::find(std::uint64_t block) const {
  // Back from the last owner starting at or before `block`, while one
  // before may still reach it (owners overlap only in a damaged image,
  // where any of them will do).
  std::size_t i = static_cast<std::size_t>(std::upper_bound(owners_.begin(), owners_.end(), block,
                                                            [](std::uint64_t b, const BlockOwner& x) { return b < x.start; }) -
                                           owners_.begin());
  while (i > 0 && reach_[i - 1] > block) {
    --i;
    if (block < owners_[i].start + owners_[i].count) return &owners_[i];
  }
  return nullptr;
}

std::optional<std::string> BlockOwners::path_of(std::uint32_t ino) const {
  const auto it = paths_.find(ino);
  if (it == paths_.end()) return std::nullopt;
  return it->second;
}

}  // namespace fscore::ext4
