// SPDX-License-Identifier: BSD-3-Clause
// Who owns each block of an ext4 image, as debugfs's icheck and ncheck tell
// it: the superblock and descriptor copies, each group's bitmaps and inode
// table, the internal journal, and for every inode in use its extent tree
// blocks, its data (a file's, a directory's, a symlink's), its attribute
// block, with the path the directory tree gives it. The crash lab names
// the blocks a request wrote with it (nvj crash frames). Images are
// untrusted: an inode, a tree or a directory that does not read is left out
// (its blocks have no owner), never an error. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/image_reader.h"

namespace fscore::ext4 {

enum class BlockKind : std::uint8_t {
  superblock,         // a copy of the superblock (group's number in `group`)
  group_descriptors,  // a copy of the descriptor table
  block_bitmap,
  inode_bitmap,
  inode_table,        // `ino`: the first inode in `start`
  journal,            // the internal journal (`file_block`: the log block at `start`)
  extent_tree,        // an index or leaf block of `ino`'s extent tree
  block_map,          // an indirect block of `ino`'s block map
  directory,          // `ino`'s blocks, from `file_block`
  file,               // a regular file's data, from `file_block`
  symlink,            // a long symlink's target
  xattr,              // an extended attribute block (`ino`: the first inode naming it)
  other,              // the data of another kind of inode (a special inode's)
};
const char* to_string(BlockKind kind);

struct BlockOwner {
  std::uint64_t start = 0;  // filesystem blocks [start, start + count)
  std::uint64_t count = 0;
  BlockKind kind = BlockKind::other;
  std::uint32_t group = 0;
  std::uint32_t ino = 0;
  std::uint64_t file_block = 0;
  bool unwritten = false;  // an unwritten extent (allocated, reads as zeroes)
};

class BlockOwners {
 public:
  // Throws std::runtime_error only when the superblock does not read
  // (read_image's errors); at most `max_inodes` inodes are followed, and
  // at most 2^18 extent tree blocks read for all of them.
  static BlockOwners read(const BlockSource& source, std::uint64_t max_inodes = std::uint64_t{1} << 22);

  const ImageInfo& info() const { return info_; }
  // The owner of `block`, nullptr for a block none owns (free, or of
  // something that did not read).
  const BlockOwner* find(std::uint64_t block) const;
  // The path of `ino` from the root ("A/foo", "" for the root itself), or
  // nullopt when the walk from the root did not reach it.
  std::optional<std::string> path_of(std::uint32_t ino) const;
  // Every owner, by start block.
  const std::vector<BlockOwner>& owners() const { return owners_; }

 private:
  ImageInfo info_;
  std::vector<BlockOwner> owners_;
  std::vector<std::uint64_t> reach_;  // reach_[i]: the furthest end of owners_[0..i]
  std::map<std::uint32_t, std::string> paths_;
};

}  // namespace fscore::ext4
