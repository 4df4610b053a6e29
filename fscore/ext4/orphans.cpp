// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/orphans.h"

#include <stdexcept>
#include <string>
#include <unordered_set>

#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/inode.h"

namespace fscore::ext4 {

namespace {

[[noreturn]] void bad(std::uint32_t ino, const std::string& why) {
  throw std::runtime_error("orphan list: inode " + std::to_string(ino) + ": " + why);
}

// Whether inode `ino`'s bit is set in its group's inode bitmap, the
// bitmap's checksum checked as the kernel checks it when it reads it.
bool in_use(const BlockSource& source, const ImageInfo& info, std::uint32_t ino) {
  const Superblock& sb = info.super;
  const std::uint32_t group = (ino - 1) / sb.inodes_per_group;
  const std::uint32_t bit = (ino - 1) % sb.inodes_per_group;
  const GroupDesc d = read_group_desc(source, info, group);
  if ((d.flags & kBgInodeUninit) != 0) return false;  // read as all clear
  if (d.inode_bitmap < 1 || d.inode_bitmap >= info.blocks) bad(ino, "its inode bitmap lies outside the filesystem");
  std::vector<std::uint8_t> bitmap(sb.inodes_per_group / 8);
  source.read(d.inode_bitmap * info.block_size, bitmap);
  if (sb.has_metadata_csum()) {
    std::uint32_t stored = d.inode_bitmap_csum, computed = bitmap_checksum(sb.csum_seed(), bitmap);
    const bool is64 = (sb.feature_incompat & incompat::k64bit) != 0 && sb.desc_size >= 64;
    if (!is64) {
      stored &= 0xFFFF;
      computed &= 0xFFFF;
    }
    if (stored != computed) bad(ino, "the inode bitmap of group " + std::to_string(group) + " fails its checksum");
  }
  return (bitmap[bit / 8] >> (bit % 8) & 1) != 0;
}

}  // namespace

OrphanList read_orphans(const BlockSource& source, const ImageInfo& info) {
  OrphanList list;
  const Superblock& sb = info.super;
  const std::uint32_t first = sb.rev_level >= 1 ? sb.first_ino : kFirstIno;
  std::unordered_set<std::uint32_t> seen;
  for (std::uint32_t ino = sb.last_orphan; ino != 0;) {
    if (ino < first || ino > sb.inodes_count) bad(ino, "not an ordinary inode of this filesystem");
    if (!seen.insert(ino).second) bad(ino, "the list comes back to it");
    if (!in_use(source, info, ino)) bad(ino, "its bit is clear in the inode bitmap");
    Inode inode;
    try {
      inode = read_inode(source, info, ino);
    } catch (const std::runtime_error& e) {
      bad(ino, e.what());
    }
    // ext4_can_truncate: a regular file, a directory, a symbolic link
    // whose target is not held in the inode (60 bytes or more).
    const std::uint16_t type = inode.mode & kModeTypeMask;
    const bool truncatable = type == kModeRegular || type == kModeDir || (type == kModeSymlink && inode.size >= 60);
    if (inode.links > 0 && !truncatable) bad(ino, "a file with links the kernel cannot truncate");
    const std::uint32_t next = inode.dtime;  // NEXT_ORPHAN
    if (next > sb.inodes_count) bad(ino, "the next orphan, " + std::to_string(next) + ", does not exist");
    (inode.links == 0 ? list.deleted : list.truncated).push_back(ino);
    ino = next;
  }
  return list;
}

}  // namespace fscore::ext4
